import { stripInvisible } from './sanitize.js';

const MAX_LINE_CHARS = 2000;
/** ANSI escape sequences (colours, cursor moves) and OSC sequences (titles, links) that CI logs are full of. */
// eslint-disable-next-line no-control-regex -- escape sequences are what this removes
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
/** The timestamp GitHub puts in front of every log line. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /;

function cleanLine(line: string, redact: (text: string) => string): string {
  // Tokens out before the cut below, which could otherwise leave half of one.
  const clean = redact(stripInvisible(line.replace(ANSI, '').replace(TIMESTAMP, '').replace(/\r$/, '')));
  return clean.length > MAX_LINE_CHARS ? `${clean.slice(0, MAX_LINE_CHARS)} [line truncated]` : clean;
}

/** A line of a log as kept: its number in the whole log (from 1) and its cleaned text. */
export interface LogLine {
  number: number;
  text: string;
}

export interface LogRead {
  /** The kept lines: the last `tail` of the log, or of the lines that match. */
  lines: LogLine[];
  /** Lines in the whole log (as far as it was read). */
  total: number;
  /** Lines that matched the pattern (equal to total without one). */
  matched: number;
  /** Why the log ended early, when the download broke off: what was read is still returned. */
  brokenOff?: string;
}

/**
 * A filter of log lines done here, so only what matters crosses to the model: the alternatives of
 * `a|b|c`, each a plain text looked for without regard to case. Plain text, not a regular
 * expression: a pattern from a model never runs a backtracking engine over megabytes of log.
 */
export function logMatcher(pattern: string | undefined): ((line: string) => boolean) | undefined {
  if (pattern === undefined) return undefined;
  const needles = pattern
    .split('|')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  if (needles.length === 0) return undefined;
  return (line) => {
    const lower = line.toLowerCase();
    return needles.some((n) => lower.includes(n));
  };
}

/**
 * The last `count` lines of a log (of those that match, with a matcher), read as a stream so memory
 * stays bounded whatever the log's size. Escape sequences and invisible characters are removed (a
 * log is output of code others wrote), and `redact` (GithubCall.redact: the tokens the server holds) runs
 * on each line before a long line is cut; nothing else is changed. A download that breaks off is not a
 * failure here: the lines read so far come back, with what happened in `brokenOff`.
 */
export async function readLog(
  body: ReadableStream<Uint8Array> | string | null,
  count: number,
  matches?: (line: string) => boolean,
  redact: (text: string) => string = (text) => text,
): Promise<LogRead> {
  const kept: LogLine[] = [];
  let total = 0;
  let matched = 0;
  const push = (raw: string): void => {
    total += 1;
    const text = cleanLine(raw, redact);
    if (matches && !matches(text)) return;
    matched += 1;
    kept.push({ number: total, text });
    if (kept.length > count) kept.shift();
  };
  if (body === null) return { lines: [], total: 0, matched: 0 };
  const chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array> = typeof body === 'string' ? [new TextEncoder().encode(body)] : (body as unknown as AsyncIterable<Uint8Array>);
  const decoder = new TextDecoder();
  let pending = '';
  let brokenOff: string | undefined;
  try {
    for await (const chunk of chunks) {
      pending += decoder.decode(chunk, { stream: true });
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      // Keep a partial line bounded too: a log without newlines must not grow without limit.
      if (pending.length > MAX_LINE_CHARS * 4) pending = pending.slice(-MAX_LINE_CHARS * 4);
      for (const line of complete) push(line);
    }
    pending += decoder.decode();
  } catch (error) {
    // The call's own cancellation or deadline is not a broken download: it ends the call.
    if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) throw error;
    brokenOff = 'the download of the log broke off before its end';
  }
  if (pending !== '') push(pending);
  return { lines: kept, total, matched, ...(brokenOff ? { brokenOff } : {}) };
}
