import { afterEach, describe, expect, it } from 'vitest';
import { protocolError } from '@suite/test-kit';
import { fileUri } from '../src/uris.js';
import { fixture, isoAgo, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

// logs://file URIs are decoded by @suite/shared (template variables, decoded once), not by the server.
describe('logs://file URIs', () => {
  it('reaches names with spaces, percent signs and non-ASCII letters, decoding each variable exactly once', async () => {
    fx = await fixture();
    const spaced = await fx.write('my app 100% ünïcode.log', lines(`${isoAgo(1)} INFO spaced`));
    // A name that itself looks percent-encoded: decoded twice, it would be "a b.log".
    const literal = await fx.write('a%20b.log', lines(`${isoAgo(1)} INFO literal`));
    await fx.write('a b.log', lines(`${isoAgo(1)} INFO the wrong file`));
    const session = await fx.connect();
    expect(fileUri(spaced)).toMatch(/my%20app%20100%25%20%C3%BCn%C3%AFcode\.log$/);
    expect((await session.readResource(fileUri(spaced))).text).toMatch(/INFO spaced$/);
    expect(fileUri(literal)).toMatch(/a%2520b\.log$/);
    expect((await session.readResource(fileUri(literal))).text).toMatch(/INFO literal$/);
  });

  it('decodes filter values once too, whatever characters they hold', async () => {
    fx = await fixture();
    const file = await fx.write('app.log', lines(`${isoAgo(3)} ERROR a&b=c failed`, `${isoAgo(2)} ERROR 50% done`, `${isoAgo(1)} INFO a+b`));
    const session = await fx.connect();
    const view = async (query: Record<string, string>): Promise<string[]> => (await session.readResource(fileUri(file, query))).text.split('\n').map((l) => l.replace(/^\S+ /, ''));
    expect(await view({ grep: 'a&b=c' })).toEqual(['ERROR a&b=c failed']);
    expect(await view({ grep: '50%' })).toEqual(['ERROR 50% done']);
    // A "+" written as it is stays a plus sign (percent-encoding, not form encoding).
    expect((await session.readResource(`${fileUri(file)}?grep=a+b`)).text).toMatch(/INFO a\+b$/);
    expect(await view({ level: 'error', grep: '%' })).toEqual(['ERROR 50% done']);
  });

  it('still refuses a misspelt filter and a URI that names no file', async () => {
    fx = await fixture();
    const file = await fx.write('app.log', lines('x'));
    const session = await fx.connect();
    expect(await protocolError(session.readResource(`${fileUri(file)}?levle=error`))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown parameter "levle" in .*: the filters are level, since, grep\.$/) });
    expect(await protocolError(session.readResource('logs://file/?level=error'))).toMatchObject({ code: -32602 });
  });
});
