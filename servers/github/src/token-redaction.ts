import { REDACTED } from '@suite/shared';

/**
 * Keeps the tokens this server holds out of everything it answers, whatever GitHub (or a proxy
 * in front of it) echoes back: an API that reflects the request's Authorization header into a
 * body, an error page that quotes it, a Location that carries it. A token is recognised in every
 * form the server can decode on sight:
 *
 * - as written, or with any of its characters escaped the way JSON (`\u0061`, `\x61`), URLs
 *   (`%61`, doubly `%2561`) or HTML (`&#97;`, `&#x61;`) escape them, mixed freely, and with
 *   invisible characters slipped between its characters;
 * - base64 and base64url at each of the three byte alignments it can have inside a longer encoded
 *   value (`Basic base64(x-access-token:TOKEN)`, `base64("Bearer TOKEN")`), line-wrapped or not;
 * - hex.
 *
 * What matches is replaced by `[redacted]`. A binary blob (base64 of bytes) is decoded, redacted
 * as bytes and encoded again, so it stays valid.
 *
 * It runs twice: on every answer as GitHub sent it (github-request.ts, before any handler could cut
 * a token in half by capping a text), and on everything a call returns (GithubSession.run).
 */

const ESCAPES_ALLOWED_BETWEEN = '(?:\\p{Default_Ignorable_Code_Point})*';
const BASE64_LINE_BREAK = '(?:\\s|\\\\[rn]|%0[aAdD])*';

/** A hex byte with either case of its letters: `a5` -> `[aA]5`. */
function hexPattern(hex: string): string {
  return [...hex].map((c) => (/[a-f]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('');
}

function regexLiteral(char: string): string {
  return char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** One character of a token in every escaped form it may take in text. */
function escapedChar(char: string): string {
  const code = char.codePointAt(0)!;
  const hex = code.toString(16).padStart(2, '0');
  // An escape may itself be URL-encoded (`%5Cu0061`, `%26%2397%3B`): a query string holding JSON or HTML.
  const backslash = '(?:\\\\|%5[cC])';
  const amp = '(?:&|%26)';
  const hash = '(?:#|%23)';
  const semi = '(?:;|%3[bB])';
  const forms = [
    regexLiteral(char),
    `%${hexPattern(hex)}`,
    `%25${hexPattern(hex)}`,
    `${backslash}u00${hexPattern(hex)}`,
    `${backslash}x${hexPattern(hex)}`,
    `${amp}${hash}0*${code}${semi}`,
    `${amp}${hash}[xX]0*${hexPattern(hex)}${semi}`,
  ];
  if (char === ' ') forms.push('\\+');
  return `(?:${forms.join('|')})`;
}

/** A base64 character, also as base64url writes it and as a URL escapes it. */
function base64Char(char: string): string {
  if (char === '+') return '(?:\\+|-|%2[bB])';
  if (char === '/') return '(?:\\/|_|%2[fF])';
  return char;
}

/**
 * The characters of base64(prefix + token) that depend on the token's bytes alone, for a prefix
 * of `alignment` unknown bytes: what any base64 text holding the token at that alignment contains.
 */
function base64Core(token: Buffer, alignment: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(alignment), token]).toString('base64').replace(/=+$/, '');
  const total = alignment + token.length;
  const known = Math.floor(total / 3) * 4 + (total % 3);
  // The first group mixes the unknown bytes in: 0, 2 or 3 of its characters depend on them.
  const skip = [0, 2, 3][alignment]!;
  return encoded.slice(skip, known);
}

/** The pattern of one token in every form it is recognised in. */
function tokenPattern(token: string): string {
  const bytes = Buffer.from(token, 'utf8');
  const clear = [...token].map(escapedChar).join(ESCAPES_ALLOWED_BETWEEN);
  const base64 = ([0, 1, 2] as const).map((alignment) => [...base64Core(bytes, alignment)].map(base64Char).join(BASE64_LINE_BREAK));
  const hex = [...bytes.toString('hex').match(/../g)!].map(hexPattern).join('');
  return [clear, ...base64, hex].map((p) => `(?:${p})`).join('|');
}

/** Tokens shorter than this are not looked for: they would match ordinary text (and no GitHub token is this short). */
const MIN_TOKEN_LENGTH = 8;

export class TokenRedactor {
  private readonly pattern: RegExp | undefined;
  private readonly tokens: readonly string[];

  constructor(tokens: Iterable<string | undefined>) {
    const distinct = [...new Set([...tokens].filter((t): t is string => typeof t === 'string' && t.length >= MIN_TOKEN_LENGTH))];
    // Longest first, so a token that holds another is replaced whole.
    distinct.sort((a, b) => b.length - a.length);
    this.tokens = distinct;
    this.pattern = distinct.length > 0 ? new RegExp(distinct.map(tokenPattern).join('|'), 'gu') : undefined;
  }

  get empty(): boolean {
    return this.pattern === undefined;
  }

  /** Text with every recognisable form of every token replaced. */
  redactText(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, REDACTED);
  }

  /** Bytes (a binary file) with every token, as written, replaced; the rest untouched. */
  redactBytes(bytes: Buffer): Buffer {
    if (!this.pattern) return bytes;
    // latin1 maps every byte to one character and back, so only the matches change.
    const text = bytes.toString('latin1');
    const redacted = this.redactText(text);
    return redacted === text ? bytes : Buffer.from(redacted, 'latin1');
  }

  /**
   * Every string in a value (a tool's answer, a resource's contents, a prompt's messages): a new
   * value where anything changed. A `blob` (base64 of bytes) is redacted as bytes and re-encoded.
   */
  redactDeep<T>(value: T): T {
    if (!this.pattern) return value;
    return this.walk(value, undefined) as T;
  }

  private walk(value: unknown, key: string | undefined, holder?: Record<string, unknown>): unknown {
    if (typeof value === 'string') {
      // A resource's blob, and GitHub's base64 file content (contents and blobs APIs): redacted as the bytes they encode.
      if (key === 'blob' || (key === 'content' && holder?.encoding === 'base64')) {
        const bytes = Buffer.from(value, 'base64');
        const redacted = this.redactBytes(bytes);
        return redacted === bytes ? value : redacted.toString('base64');
      }
      return this.redactText(value);
    }
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((item) => {
        const next = this.walk(item, undefined);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : value;
    }
    if (value instanceof Uint8Array) return this.redactBytes(Buffer.from(value));
    if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value)) {
        const next = this.walk(item, name, value as Record<string, unknown>);
        if (next !== item) changed = true;
        out[name] = next;
      }
      return changed ? out : value;
    }
    return value;
  }

  /** Whether `text` holds any token in a recognised form (for checks, not for redaction). */
  holdsToken(text: string): boolean {
    if (!this.pattern) return false;
    this.pattern.lastIndex = 0;
    const found = this.pattern.test(text);
    this.pattern.lastIndex = 0;
    return found;
  }

  get size(): number {
    return this.tokens.length;
  }
}
