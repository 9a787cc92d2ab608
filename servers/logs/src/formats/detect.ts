import { candidateParsers, type JsonFields, type LogFormat } from './parsers.js';

/** Lines of a file's start looked at to recognise its format. */
export const SAMPLE_LINES = 60;
export const SAMPLE_BYTES = 32 * 1024;

/**
 * Recognises a log's format from its first lines: the format whose parser sees the most entry
 * starts wins, if they are at least a fifth of the non-empty lines or the first line is one (a log
 * of long stack traces has few starts); ties go to the more specific format. Otherwise plain text.
 */
export function detectFormat(lines: readonly string[], json: JsonFields, reference: number): LogFormat {
  const sample = lines.filter((l) => l.trim().length > 0).slice(0, SAMPLE_LINES);
  if (sample.length === 0) return 'plain';
  let best: { format: LogFormat; heads: number; firstIsHead: boolean } | undefined;
  for (const parser of candidateParsers(json, reference)) {
    let heads = 0;
    let firstIsHead = false;
    sample.forEach((line, i) => {
      if (parser.head(line) === undefined) return;
      heads++;
      if (i === 0) firstIsHead = true;
    });
    if (heads > 0 && (!best || heads > best.heads)) best = { format: parser.format, heads, firstIsHead };
  }
  if (best && (best.firstIsHead || best.heads * 5 >= sample.length)) return best.format;
  return 'plain';
}
