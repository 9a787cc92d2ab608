import { describe, expect, it } from 'vitest';
import { resolveApiUrl } from '../src/api-url.js';

describe('where GitHub is', () => {
  it('defaults to api.github.com', () => {
    expect(resolveApiUrl({})).toBe('https://api.github.com');
    expect(resolveApiUrl({ host: 'github.com' })).toBe('https://api.github.com');
    expect(resolveApiUrl({ host: 'https://github.com/' })).toBe('https://api.github.com');
  });

  it('derives the API of a GHE.com tenant and of GitHub Enterprise Server', () => {
    expect(resolveApiUrl({ host: 'octo.ghe.com' })).toBe('https://api.octo.ghe.com');
    expect(resolveApiUrl({ host: 'api.octo.ghe.com' })).toBe('https://api.octo.ghe.com');
    expect(resolveApiUrl({ host: 'GHE.Example.COM' })).toBe('https://ghe.example.com/api/v3');
    expect(resolveApiUrl({ host: 'https://ghe.example.com:8443' })).toBe('https://ghe.example.com:8443/api/v3');
  });

  it('takes an explicit API URL as it is (without a trailing slash), and it wins over the host', () => {
    expect(resolveApiUrl({ apiUrl: 'https://ghe.example.com/api/v3/', host: 'github.com' })).toBe('https://ghe.example.com/api/v3');
    expect(resolveApiUrl({ apiUrl: 'http://127.0.0.1:8080' })).toBe('http://127.0.0.1:8080');
    expect(resolveApiUrl({ host: 'http://localhost:9000' })).toBe('http://localhost:9000/api/v3');
  });

  it('requires HTTPS off the machine: the token travels with every request', () => {
    expect(() => resolveApiUrl({ apiUrl: 'http://ghe.example.com/api/v3' })).toThrow('The API URL must use https:// (plain http is only accepted on loopback addresses): http://ghe.example.com');
    expect(() => resolveApiUrl({ host: 'http://ghe.example.com' })).toThrow(/GITHUB_HOST must use https:\/\//);
    expect(() => resolveApiUrl({ apiUrl: 'ftp://x' })).toThrow(/must be an https:\/\/ URL/);
    expect(() => resolveApiUrl({ apiUrl: 'not a url' })).toThrow(/is not a URL/);
    expect(() => resolveApiUrl({ host: 'ghe.example.com/api/v3' })).toThrow(/a host name, not a URL with a path/);
    expect(() => resolveApiUrl({ apiUrl: 'https://x.example/?token=1' })).toThrow(/query or fragment/);
  });
});
