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

/**
 * The last `count` lines of a log, read as a stream so memory stays bounded whatever the log's
 * size. Escape sequences and invisible characters are removed (a log is output of code others
 * wrote), and `redact` (GithubCall.redact: the tokens the server holds) runs on each line before
 * a long line is cut; nothing else is changed.
 */
export async function tailLines(body: ReadableStream<Uint8Array> | string | null, count: number, redact: (text: string) => string = (text) => text): Promise<{ lines: string[]; total: number }> {
  const kept: string[] = [];
  let total = 0;
  const push = (line: string): void => {
    total += 1;
    kept.push(line);
    if (kept.length > count) kept.shift();
  };
  if (body === null) return { lines: [], total: 0 };
  const chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array> = typeof body === 'string' ? [new TextEncoder().encode(body)] : (body as unknown as AsyncIterable<Uint8Array>);
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    // Keep a partial line bounded too: a log without newlines must not grow without limit.
    if (pending.length > MAX_LINE_CHARS * 4) pending = pending.slice(-MAX_LINE_CHARS * 4);
    for (const line of complete) push(line);
  }
  pending += decoder.decode();
  if (pending !== '') push(pending);
  return { lines: kept.map((line) => cleanLine(line, redact)), total };
}
