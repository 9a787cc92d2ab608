import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TokenRedactor } from '../src/token-redaction.js';
import { tokenExposures } from './fake-github/hostile.js';

/**
 * The redactor on its own (upstream-hostile.test.ts drives it through the protocol): for random
 * tokens of GitHub's shapes and random surroundings, every encoding at every alignment is caught,
 * and ordinary text, a token's prefix and another token are left alone.
 */

const SHAPES = [
  () => `ghp_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'x').slice(0, 36)}`,
  () => `github_pat_${randomBytes(60).toString('base64url').replace(/-/g, 'x').slice(0, 82)}`,
  () => `gho_${randomBytes(27).toString('hex').slice(0, 36)}`,
  () => `plain-${randomBytes(12).toString('hex')}`,
];

function encodings(token: string, before: Buffer, after: Buffer): string[] {
  const wrap = (bytes: Buffer): Buffer => Buffer.concat([before, bytes, after]);
  const raw = Buffer.from(token);
  return [
    wrap(raw).toString('latin1'),
    wrap(raw).toString('base64'),
    wrap(raw).toString('base64url'),
    wrap(raw).toString('base64').replace(/(.{60})/g, '$1\n'),
    encodeURIComponent(wrap(raw).toString('base64')),
    wrap(Buffer.from(`token ${token}`)).toString('base64'),
    raw.toString('hex'),
    [...token].map((c, i) => (i % 3 === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join(''),
    [...token].map((c, i) => (i % 2 === 0 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c)).join(''),
    [...token].map((c, i) => (i % 4 === 1 ? `&#${c.charCodeAt(0)};` : c)).join(''),
    [...token].map((c, i) => (i === 5 ? `%5Cu${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join(''),
    [...token].join('\u200b'),
  ];
}

describe('TokenRedactor', () => {
  it('catches every encoding of random tokens at every alignment, in random surroundings', () => {
    for (let round = 0; round < 24; round++) {
      const token = SHAPES[round % SHAPES.length]!();
      const redactor = new TokenRedactor([token]);
      const before = randomBytes(round % 7);
      const after = randomBytes((round * 5) % 4);
      for (const encoded of encodings(token, before, after)) {
        const shown = redactor.redactText(`before ${encoded} after`);
        expect(tokenExposures(shown, token), `${token} as ${encoded}`).toEqual([]);
        expect(shown, encoded).toContain('[redacted]');
      }
    }
  });

  it('leaves ordinary text, a prefix of the token and other tokens alone', () => {
    const token = 'ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const redactor = new TokenRedactor([token, undefined, 'short']);
    const text = `Fix the login page (#12). ${token.slice(0, 20)} is not it; neither is ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210. ${Buffer.from('hello world, nothing here').toString('base64')}`;
    expect(redactor.redactText(text)).toBe(text);
    expect(redactor.size).toBe(1);
  });

  it('redacts a blob as bytes, keeping it valid base64, and walks answers without touching what holds no token', () => {
    const token = 'plain-0123456789abcdef0123';
    const redactor = new TokenRedactor([token]);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(token), Buffer.from([0, 1, 2])]);
    const answer = { contents: [{ uri: 'repo://a/b/contents/x.png', blob: png.toString('base64') }], other: { text: 'clean' } };
    const out = redactor.redactDeep(answer);
    const bytes = Buffer.from(out.contents[0]!.blob, 'base64');
    expect(bytes.toString('latin1')).toBe(`\x89PNG[redacted]\x00\x01\x02`);
    expect(out.other).toBe(answer.other);
  });
});
