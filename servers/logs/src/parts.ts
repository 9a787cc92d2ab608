import type { FileHandle } from 'node:fs/promises';
import { CHUNK_BYTES, NEWLINE } from './chunks.js';
import { joinsFragments } from './formats/cri.js';
import { parserFor, type FormatSpec } from './formats/parsers.js';
import type { FilePart } from './scan-protocol.js';
import { lastHead, lastLines } from './search.js';

/**
 * Where a large plain log is cut so that several workers search it at once, each its own part,
 * with the answer of one search from the start. A part starts at a chunk cut of that search (the
 * line after the last newline before a multiple of the chunk size: the search reads in chunks
 * ending there, see plainSource), so from there its chunks are the same; and it is given what
 * that search knows when it gets there: the last line that starts an entry (for the time, level
 * and entry of continuation lines) and the last lines (for the context before a match). Both are
 * read from the chunk before the cut, here. A cut is made only where that chunk shows them as the
 * search would (a newline in each of the two chunk-sized windows before it, an entry start among
 * the last lines of the chunk); otherwise the file is searched in one piece.
 */

/** Files smaller than this are searched in one piece: a part must be worth a worker. */
export const MIN_PART_BYTES = 32 * 1024 * 1024;

export async function planParts(handle: FileHandle, size: number, spec: FormatSpec, contextLines: number, count: number): Promise<FilePart[] | undefined> {
  const parts = Math.min(count, Math.floor(size / MIN_PART_BYTES));
  // A part's first lines may be fragments of an entry that started in the part before: CRI files are searched whole.
  if (parts < 2 || joinsFragments(spec)) return undefined;
  const parser = parserFor(spec);
  const window = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  const cuts: { at: number; prevHead: string; prevTail: string[] }[] = [];
  for (let k = 1; k < parts; k++) {
    // The read the search ends at a multiple of the chunk size; the two chunks before it are read here.
    const readEnd = Math.floor((size * k) / parts / CHUNK_BYTES) * CHUNK_BYTES;
    if (readEnd < 2 * CHUNK_BYTES || (cuts.length > 0 && readEnd <= (cuts[cuts.length - 1] as { at: number }).at + CHUNK_BYTES)) return undefined;
    const { bytesRead } = await handle.read(window, 0, window.length, readEnd - window.length);
    if (bytesRead !== window.length) return undefined;
    const last = window.lastIndexOf(NEWLINE, window.length - 1);
    const before = window.lastIndexOf(NEWLINE, CHUNK_BYTES - 1);
    if (last < CHUNK_BYTES || before === -1) return undefined;
    // The chunk the search yields last before the cut: from the previous cut to this one.
    const chunk = window.subarray(before + 1, last + 1);
    const prevHead = lastHead(chunk, parser);
    if (prevHead === undefined) return undefined;
    cuts.push({ at: readEnd - window.length + last + 1, prevHead, prevTail: contextLines > 0 ? lastLines(chunk, contextLines) : [] });
  }
  // The parts' own starting knowledge: the first has none, each next one that of its cut.
  const result: FilePart[] = [];
  let from = 0;
  for (let i = 0; i <= cuts.length; i++) {
    const cut = cuts[i - 1];
    const end = i < cuts.length ? (cuts[i] as { at: number }).at : Infinity;
    result.push({ start: from, end, more: i < cuts.length, prevTail: cut ? cut.prevTail : [], ...(cut ? { prevHead: cut.prevHead } : {}) });
    from = end;
  }
  return result;
}
