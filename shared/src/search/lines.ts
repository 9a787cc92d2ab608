import { ByteFinder } from './byte-finder.js';
import { requiredLiteral } from './required-literal.js';

/**
 * From a pattern to the lines worth testing. A literal is looked for as it is; a regular
 * expression through the text every match of it must contain (`requiredLiteral`). Found in raw
 * bytes, a hit names its line; only that line is decoded and tested, by the caller's own test
 * (which stays the judge: the bytes only rule lines out). A leaf module: worker threads use it.
 */

/** What to look for in raw bytes before testing a line; undefined when every line has to be tested. */
export function lineFinder(pattern: string, literal: boolean, caseSensitive: boolean): ByteFinder | undefined {
  const text = literal ? pattern : requiredLiteral(pattern);
  return text === undefined ? undefined : ByteFinder.for(text, !caseSensitive);
}

export interface LineSpan {
  /** Offset of the line's first byte. */
  start: number;
  /** Offset of its newline, or the end of the bytes when it has none. */
  end: number;
}

/** The first line of bytes[from, …) that holds the finder's text, or undefined. Lines end at 0x0A. */
export function nextLineWith(finder: ByteFinder, bytes: Buffer, from: number): LineSpan | undefined {
  const at = finder.find(bytes, from);
  if (at === -1) return undefined;
  const start = at === 0 ? 0 : bytes.lastIndexOf(0x0a, at - 1) + 1;
  const newline = bytes.indexOf(0x0a, at);
  return { start: Math.max(start, from), end: newline === -1 ? bytes.length : newline };
}

/** A line's text: UTF-8, without the CR of a CRLF ending. */
export function lineText(bytes: Buffer, span: LineSpan): string {
  const end = span.end > span.start && bytes[span.end - 1] === 0x0d ? span.end - 1 : span.end;
  return bytes.toString('utf8', span.start, end);
}
