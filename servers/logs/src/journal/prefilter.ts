import { ByteFinder, requiredLiteral } from '@suite/shared/search';
import type { SearchQuery } from '../scan-protocol.js';

/**
 * Which journal entries a search pattern could match, decided on the raw bytes of
 * `journalctl -o export` before an entry is turned into its JSON line (entries.ts). The pattern
 * runs over the JSON line, so an entry is left out only when no match is possible there: every
 * match holds the pattern's required text L, and an occurrence of L in the JSON line that has no
 * `"` lies inside one key or one value. Keys are field names (in the export bytes as they are) or
 * `time`, `level`, `message`; values are the field bytes decoded as UTF-8 (with U+FFFD for what is
 * not UTF-8), cut with `…`, JSON-escaped, or a time or level made from other fields. So L is looked
 * for in the bytes when it holds none of `"`, `\`, control characters, `…`, U+FFFD, and cannot
 * lie inside a time, a key of ours or JSON punctuation; a level name holding L makes its
 * `PRIORITY=N` line a hit too. An escape (`\n`, `\u001b`) ends in letters and digits of its own,
 * which an occurrence of L can start with: the bytes are searched for L less the longest such
 * start, which every such occurrence still holds. A leaf of the package.
 */

/** Where text first occurs in bytes at or after `from`, or -1. */
export interface BytesFinder {
  find(buf: Uint8Array, from: number): number;
}

export interface EntryPrefilter {
  /** An entry whose bytes hold none of these cannot match. */
  finders: BytesFinder[];
}

const LEVEL_NAMES = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];
const OUR_KEYS = ['time', 'level', 'message'];

/** What JSON.stringify writes after the backslash of an escape: `\"` and `\\` aside, these. */
const ESCAPES: readonly string[] = (() => {
  const out = ['b', 'f', 'n', 'r', 't'];
  for (let c = 0; c < 0x20; c++) if (![8, 9, 10, 12, 13].includes(c)) out.push(`u${c.toString(16).padStart(4, '0')}`);
  return out;
})();

/**
 * The bytes test for a search, or undefined when the pattern cannot be decided on bytes (no
 * required text, or text that may come from what the JSON line adds) or context lines are asked
 * for (they are the neighbouring entries, whatever they hold).
 */
export function entryPrefilter(query: Pick<SearchQuery, 'pattern' | 'literal' | 'caseSensitive' | 'contextLines'>): EntryPrefilter | undefined {
  if (query.pattern === undefined || query.contextLines > 0) return undefined;
  const insensitive = !query.caseSensitive;
  const text = query.literal ? query.pattern : requiredLiteral(query.pattern);
  if (text === undefined || text.length === 0) return undefined;
  // eslint-disable-next-line no-control-regex
  if (/["\\\x00-\x1f…\ufffd\ud800-\udfff]/.test(text) || /^[{}[\]:,]+$/.test(text)) return undefined;
  const fold = (s: string): string => (insensitive ? s.toLowerCase() : s);
  const folded = fold(text);
  // Inside a key of ours, an escape or a time (`2026-12-02T04:24:47.123456Z`): no bytes hold those.
  if (OUR_KEYS.some((k) => k.includes(folded)) || ESCAPES.some((e) => e.includes(folded))) return undefined;
  if ((insensitive ? /^[0-9:.tz-]+$/i : /^[0-9:.TZ-]+$/).test(text)) return undefined;
  let cut = 0;
  for (const e of ESCAPES) {
    for (let k = 1; k <= e.length && k < folded.length; k++) if (folded.startsWith(e.slice(-k))) cut = Math.max(cut, k);
  }
  const rest = text.slice(cut);
  const main = ByteFinder.for(rest, insensitive);
  if (!main) return undefined;
  const finders: BytesFinder[] = [main];
  // A field name is decoded as Latin-1: a name byte over 0x7F is that character in the line.
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(rest) && /^[\x00-\xff]*$/.test(rest)) {
    const needle = Buffer.from(rest, 'latin1');
    finders.push({ find: (buf, from) => Buffer.from(buf.buffer, buf.byteOffset, buf.length).indexOf(needle, from) });
  }
  LEVEL_NAMES.forEach((name, priority) => {
    if (name.includes(folded)) finders.push(ByteFinder.for(`PRIORITY=${priority}\n`, false) as ByteFinder);
  });
  return { finders };
}
