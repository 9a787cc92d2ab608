import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from '../src/index.js';

describe('redactSecrets', () => {
  it('redacts credentials by their shape', () => {
    expect(redactSecrets('postgresql://app:s3cret@db.example.com/prod')).toBe(`postgresql://app:${REDACTED}@db.example.com/prod`);
    expect(redactSecrets("host=db password='a b c' user=x")).toBe(`host=db password=${REDACTED} user=x`);
    expect(redactSecrets('Authorization: Bearer abcdefgh12345678')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactSecrets(`token ghp_${'A'.repeat(36)} end`)).toBe(`token ${REDACTED} end`);
  });

  it('takes time in proportion to the text, whatever its shape (error messages repeat what a client sent; found by the fuzzer)', () => {
    // Each of these took seconds (quadratic backtracking in the URL pattern) before the patterns were bounded.
    for (const text of ['x'.repeat(60_000), 'a://b:'.repeat(10_000), `http://${'u'.repeat(60_000)}`, `http://u:${'p'.repeat(60_000)}`]) {
      const started = performance.now();
      redactSecrets(text);
      expect(performance.now() - started, `${text.slice(0, 12)}… (${text.length} characters)`).toBeLessThan(500);
    }
  }, 120_000);
});
