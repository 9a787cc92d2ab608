import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, countOf, encodeCursor, type PathGuard } from '@suite/shared';
import { withLog, type OpenedLog } from './access.js';
import { NEWLINE, gzipSource, utf8Boundary } from './chunks.js';
import { familyOf } from './discovery.js';
import { joinCriLines, linesBeforePending } from './formats/cri.js';

/**
 * What was appended to a log since a cursor, for clients that do not subscribe. The cursor holds
 * the file's identity (device, inode, birth time), a byte offset at a line boundary, two
 * fingerprints of the bytes before it (the 64 bytes just before the offset, and the file's first
 * 4 KiB), the file's size and modification time, and when it was issued. That is how a rotation
 * (another inode at the path), a truncation (the file is shorter than the offset), a
 * truncate-then-regrow (the bytes before the offset changed) and a rewrite to the same size (same
 * size, another modification time) are told apart from plain growth.
 *
 * The lines written between the last call and a rotation are looked for in the rotated copy: after
 * a rename, the old file is found among the rotated siblings by its inode, or, once compressed, by
 * its content (its bytes before the offset match the cursor's fingerprints); after a copytruncate,
 * the copy is found by its content. A copy made since the cursor whose content matches it also
 * reveals a copytruncate followed by identical writes, which the live file alone cannot show. When
 * the copy's rest does not fit in one answer, the cursor carries what is owed (the copy's identity
 * and the offset reached) and the next call continues there before the live file.
 */

const FINGERPRINT_BYTES = 64;
const HEAD_BYTES = 4096;
/** File times come from a coarse clock that may lag Date.now() by a tick. */
const CLOCK_SLACK_MS = 100;
/** How long looking through rotated copies (decompressing .gz ones) may take in one call. */
const COPY_BUDGET_MS = 5000;
/** Rotated copies whose content is compared with the cursor, newest first. */
const MAX_CANDIDATES = 16;
/** Rotated copies a cursor remembers as already there when it was issued. */
const MAX_KNOWN = 16;
/** Rotated copies newer than the cursor's that one cursor can still owe (beyond this, the answer names the rest). */
const MAX_QUEUED = 16;

const owed = z.object({ dev: z.number(), ino: z.number(), off: z.number().int().min(0), end: z.number().int().min(0).optional() });
/** A rotated copy newer than the one the cursor was in, to be read whole (oldest first) before the live file. */
const queued = z.object({ dev: z.number(), ino: z.number(), n: z.string().max(256), sz: z.number().int().min(0).optional() });
/**
 * `bt`: the file's birth time where the filesystem records one; it tells a new file that reused a
 * freed inode from the old one. `hd`, `sz`, `mt`, `at` (fingerprint of the first 4 KiB, size,
 * modification time, time issued) and `owe` (bytes of a rotated copy still to give) are newer:
 * cursors without them are still accepted.
 */
const cursorState = z.object({
  dev: z.number(),
  ino: z.number(),
  bt: z.number().optional(),
  off: z.number().int().min(0),
  fp: z.string(),
  hd: z.string().optional(),
  sz: z.number().optional(),
  mt: z.number().optional(),
  at: z.number().optional(),
  owe: owed.optional(),
  nx: z.array(queued).max(MAX_QUEUED).optional(),
  /** The inodes of the rotated copies there were when the cursor was issued: a copy not among them was made since. */
  ks: z.array(z.number()).max(MAX_KNOWN).optional(),
  /** Fingerprints of those copies' first 4 KiB: a copy compressed since (another inode) still holds old lines. */
  kh: z.array(z.string().max(32)).max(MAX_KNOWN).optional(),
});
type CursorState = z.infer<typeof cursorState>;
type Owed = z.infer<typeof owed>;
type Queued = z.infer<typeof queued>;

export type NewLinesStatus = 'started' | 'appended' | 'unchanged' | 'rotated' | 'truncated' | 'missing';

export interface NewLinesResult {
  status: NewLinesStatus;
  lines: string[];
  cursor: string;
  /** More was appended than fitted: call again with the cursor. */
  more: boolean;
  /** What happened, for the model: a rotation, a truncation, where the lines came from. */
  notes: string[];
}

function encode(state: CursorState): string {
  return encodeCursor('read-new-lines', state);
}

export function decodeNewLinesCursor(cursor: string): CursorState {
  try {
    const envelope = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v?: unknown; k?: unknown; s?: unknown };
    if (envelope.v === 1 && envelope.k === 'read-new-lines') {
      const state = cursorState.safeParse(envelope.s);
      if (state.success) return state.data;
    }
  } catch {
    // Reported below.
  }
  throw ToolError.invalidArgument('Invalid cursor: use the cursor read_new_lines returned last time, or call it without one to start at the end of the log.');
}

function digest(bytes: Buffer): string {
  return bytes.length === 0 ? '' : createHash('sha256').update(bytes).digest('base64url').slice(0, 16);
}

async function readAt(log: OpenedLog, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await log.handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** What a cursor remembers of the bytes before its offset. */
interface Marks {
  fp: string;
  /** Absent in cursors issued before it existed. */
  hd?: string;
}

function regionsBefore(offset: number): { fpFrom: number; hdLength: number } {
  return { fpFrom: offset - Math.min(FINGERPRINT_BYTES, offset), hdLength: Math.min(HEAD_BYTES, offset) };
}

async function marksOf(log: OpenedLog, offset: number): Promise<Required<Marks>> {
  const { fpFrom, hdLength } = regionsBefore(offset);
  return { fp: digest(await readAt(log, fpFrom, offset - fpFrom)), hd: digest(await readAt(log, 0, hdLength)) };
}

function sameMarks(found: Required<Marks>, expected: Marks): boolean {
  return found.fp === expected.fp && (expected.hd === undefined || found.hd === expected.hd);
}

interface Chunk {
  lines: string[];
  /** Offset just past the last byte taken. */
  end: number;
  more: boolean;
}

function physicalLines(data: Buffer, take: number): string[] {
  const lines = data.toString('utf8', 0, take).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** The lines of data[0, take), with the fragments of Kubernetes' CRI partial lines joined into their entries. */
function toLines(data: Buffer, take: number): string[] {
  const lines = physicalLines(data, take);
  if (!lines.some((l) => l.includes(' P '))) return lines;
  return joinCriLines(lines).map((e) => e.line);
}

/**
 * Where to stop in data[0, take) so that fragments of a CRI partial line whose F line is not
 * written yet wait for it (the cursor stays before them). When they fill the whole answer
 * (`full`), they are given as they are: an entry marked unfinished, never a wait without end.
 */
function beforePending(data: Buffer, take: number, full: boolean): number {
  const lines = physicalLines(data, take);
  if (!lines.some((l) => l.includes(' P '))) return take;
  const keep = linesBeforePending(lines);
  if (keep === undefined || (keep === 0 && full)) return take;
  let end = 0;
  for (let i = 0; i < keep; i++) end = data.indexOf(NEWLINE, end) + 1;
  return end;
}

/**
 * Whole lines from `offset`, up to `maxBytes`. A line still being written (no newline yet) is
 * left for next time, unless `final` (a rotated file, which will not grow any more).
 */
async function readFrom(log: OpenedLog, offset: number, maxBytes: number, final: boolean): Promise<Chunk> {
  const available = log.size - offset;
  if (available <= 0) return { lines: [], end: offset, more: false };
  const length = Math.min(available, maxBytes);
  const data = await readAt(log, offset, length);
  const lastNewline = data.lastIndexOf(NEWLINE);
  let take: number;
  if (lastNewline !== -1) take = lastNewline + 1;
  else if (length < available) take = utf8Boundary(data, data.length); // one line longer than maxBytes: give it in pieces
  else take = 0;
  if (final && length === available) take = data.length;
  else if (!final && take > 0) take = beforePending(data, take, length < available);
  return { lines: toLines(data, take), end: offset + take, more: offset + take < log.size && take > 0 && length < available };
}

interface CopyTail extends Chunk {
  /** The copy's size (decompressed for .gz); undefined when the budget ran out before its end. */
  size: number | undefined;
}

/**
 * The rest of a compressed copy from `offset`, in one pass from its start: with `marks`, only if
 * its bytes before the offset are the ones the cursor remembers (undefined otherwise). Corrupt or
 * truncated gzip data: undefined.
 */
async function gzipTail(log: OpenedLog, offset: number, maxBytes: number, marks: Marks | undefined, deadline: number): Promise<CopyTail | undefined> {
  const { fpFrom, hdLength } = regionsBefore(offset);
  const head: Buffer[] = [];
  const before: Buffer[] = [];
  const taken: Buffer[] = [];
  let takenBytes = 0;
  let total = 0;
  let checked = marks === undefined;
  let complete = true;
  const check = (): boolean => {
    checked = true;
    const found = { fp: digest(Buffer.concat(before)), hd: digest(Buffer.concat(head)) };
    return sameMarks(found, marks as Marks);
  };
  try {
    for await (const chunk of gzipSource(log.handle.fd).lineChunks()) {
      const start = chunk.offset;
      const bytes = chunk.bytes;
      const stop = start + bytes.length;
      total = stop;
      if (!checked) {
        if (start < hdLength) {
          head.push(Buffer.from(bytes.subarray(0, hdLength - start)));
          // Another file's first bytes: no need to decompress up to the offset to know.
          if (stop >= hdLength && marks?.hd !== undefined && digest(Buffer.concat(head)) !== marks.hd) return undefined;
        }
        if (stop > fpFrom && start < offset) before.push(Buffer.from(bytes.subarray(Math.max(0, fpFrom - start), offset - start)));
        if (stop >= offset && !check()) return undefined;
      }
      if (stop > offset && takenBytes <= maxBytes) {
        const piece = bytes.subarray(Math.max(0, offset - start));
        const room = maxBytes + 1 - takenBytes;
        taken.push(Buffer.from(piece.subarray(0, room)));
        takenBytes += Math.min(piece.length, room);
      }
      if (Date.now() > deadline) {
        complete = false;
        break;
      }
    }
  } catch {
    return undefined;
  }
  if (!checked && (total < offset || !check())) return undefined;
  const data = Buffer.concat(taken);
  const rest = total - offset;
  let take: number;
  if (complete && rest <= maxBytes) take = data.length;
  else {
    const window = data.subarray(0, Math.min(data.length, maxBytes));
    const lastNewline = window.lastIndexOf(NEWLINE);
    take = lastNewline !== -1 ? lastNewline + 1 : complete ? utf8Boundary(window, window.length) : 0;
  }
  return { lines: toLines(data, take), end: offset + take, more: !complete || offset + take < total, size: complete ? total : undefined };
}

/** The rest of a rotated copy from `offset` (plain or .gz); with `marks`, only if its content matches the cursor's. */
async function copyTail(copy: OpenedLog, offset: number, maxBytes: number, marks: Marks | undefined, deadline: number): Promise<CopyTail | undefined> {
  if (copy.compressed) return gzipTail(copy, offset, maxBytes, marks, deadline);
  if (marks !== undefined && (copy.size < offset || !sameMarks(await marksOf(copy, offset), marks))) return undefined;
  const chunk = await readFrom(copy, Math.min(offset, copy.size), maxBytes, true);
  return { ...chunk, size: copy.size };
}

interface Sibling {
  path: string;
  name: string;
  dev: number;
  ino: number;
  /** When it last changed name or content (a copy's creation, a rename, a compression). */
  changedMs: number;
  /** When its content was last written (a rename keeps it; gzip gives the copy its original's). */
  mtimeMs: number;
  size: number;
}

/** The rotated copies of a live log, newest first (the live file itself and other names of its inode left out). */
async function siblingsOf(live: OpenedLog): Promise<Sibling[]> {
  const out: Sibling[] = [];
  for (const member of await familyOf(live.real)) {
    if (member.path === live.real) continue;
    const stat = await lstat(member.path).catch(() => undefined);
    if (!stat?.isFile() || (stat.ino === live.ino && stat.dev === live.dev)) continue;
    out.push({ path: member.path, name: member.name, dev: stat.dev, ino: stat.ino, changedMs: Math.max(stat.ctimeMs, stat.birthtimeMs), mtimeMs: stat.mtimeMs, size: stat.size });
  }
  return out;
}

interface Found {
  sibling: Sibling;
  tail: CopyTail;
  /** The rotated copies newer than the one found, oldest first: written wholly after the cursor. */
  newer: Sibling[];
  /** Found at offset 0 with no copy known to the cursor left: copies made since may have been removed already. */
  unsure?: boolean;
}

async function tailOf(guard: PathGuard, sibling: Sibling, offset: number, maxBytes: number, marks: Marks | undefined, deadline: number): Promise<CopyTail | undefined> {
  try {
    return await withLog(guard, sibling.path, async (copy) => (copy.ino === sibling.ino && copy.dev === sibling.dev ? copyTail(copy, offset, maxBytes, marks, deadline) : undefined));
  } catch {
    // Gone since it was listed, or not readable: not the copy.
    return undefined;
  }
}

/**
 * The rotated copy that holds what the cursor had not reached: by inode when given, else by content
 * (changed since the cursor, when it says when that was), with the copies rotated after it.
 */
async function findCopy(guard: PathGuard, live: OpenedLog, cursor: CursorState, maxBytes: number, deadline: number, byInode: boolean): Promise<Found | undefined> {
  const siblings = await siblingsOf(live);
  const found = (sibling: Sibling, tail: CopyTail): Found => ({ sibling, tail, newer: siblings.slice(0, siblings.indexOf(sibling)).reverse() });
  const marks: Marks = { fp: cursor.fp, ...(cursor.hd !== undefined ? { hd: cursor.hd } : {}) };
  // The inode is a hint only: a file created after the old one was compressed and removed may reuse
  // it, so its content must match too (at offset 0 there is nothing to match: the times decide).
  const byIno = byInode && cursor.off > 0 ? siblings.find((s) => s.ino === cursor.ino && s.dev === cursor.dev) : undefined;
  if (byIno) {
    const tail = await tailOf(guard, byIno, cursor.off, maxBytes, marks, deadline);
    if (tail) return found(byIno, tail);
  }
  const since = cursor.at;
  if (cursor.off === 0) {
    // At offset 0 every copy matches the fingerprints: the file the cursor was in was empty, so its
    // copy is the oldest one whose content was written after the cursor.
    const sibling = (await writtenSince(guard, siblings, cursor))[0];
    if (!sibling) return undefined;
    const tail = await tailOf(guard, sibling, 0, maxBytes, undefined, deadline);
    if (!tail) return undefined;
    // Copies are removed oldest first: while one the cursor knew is left, none made since is gone.
    let unsure = true;
    for (const s of siblings) if (unsure && (await knownTo(guard, s, cursor))) unsure = false;
    return { ...found(sibling, tail), unsure };
  }
  // Past offset 0 the fingerprints decide, and a copy whose time lags a tick counts.
  const recent = (s: Sibling): boolean => since === undefined || s.changedMs >= since - CLOCK_SLACK_MS;
  const candidates = siblings.filter(recent).slice(0, MAX_CANDIDATES);
  for (const sibling of candidates) {
    if (Date.now() > deadline) break;
    const tail = await tailOf(guard, sibling, cursor.off, maxBytes, marks, deadline);
    if (tail) return found(sibling, tail);
  }
  return undefined;
}

async function state(guard: PathGuard, log: OpenedLog, offset: number, at: number, owe?: Owed): Promise<CursorState> {
  const marks = await marksOf(log, offset);
  const siblings = (await siblingsOf(log)).slice(0, MAX_KNOWN);
  const known = siblings.map((s) => s.ino);
  const heads: string[] = [];
  for (const sibling of siblings) {
    const head = await headOf(guard, sibling);
    if (head && !heads.includes(head)) heads.push(head);
  }
  return {
    dev: log.dev,
    ino: log.ino,
    ...(log.birthtimeMs > 0 ? { bt: log.birthtimeMs } : {}),
    off: offset,
    fp: marks.fp,
    hd: marks.hd,
    sz: log.size,
    mt: log.mtimeMs,
    at,
    ...(owe ? { owe } : {}),
    ks: known,
    ...(heads.length > 0 ? { kh: heads } : {}),
  };
}

/**
 * Whether a rotated copy was there when the cursor was issued: by the fingerprint of its first
 * 4 KiB (a copy compressed since is another inode with the same first bytes, and a file made since
 * may reuse a removed copy's inode number), by inode for an empty one.
 */
async function knownTo(guard: PathGuard, sibling: Sibling, cursor: CursorState): Promise<boolean> {
  const head = cursor.kh !== undefined ? await headOf(guard, sibling) : undefined;
  if (head !== undefined) return (cursor.kh as string[]).includes(head);
  return cursor.ks?.includes(sibling.ino) ?? false;
}

/**
 * Rotated copies whose content was written after the cursor was issued, oldest first: not there
 * when it was issued, and written since (a rename keeps a file's modification time, and gzip gives
 * the copy its original's; a file time may lag the clock by a tick). Cursors that predate the list
 * of known copies go by the modification time alone.
 */
async function writtenSince(guard: PathGuard, siblings: readonly Sibling[], cursor: CursorState): Promise<Sibling[]> {
  const since = cursor.at;
  if (since === undefined) return [];
  if (cursor.ks === undefined) return siblings.filter((s) => s.mtimeMs > since).reverse();
  const out: Sibling[] = [];
  for (const sibling of siblings) {
    if (sibling.mtimeMs < since - CLOCK_SLACK_MS || (await knownTo(guard, sibling, cursor))) continue;
    out.push(sibling);
  }
  return out.reverse();
}

/** A copy's first 4 KiB (decompressed for .gz), fingerprinted; remembered by identity, size and time, so that polling does not decompress again. */
const headCache = new Map<string, string>();
const HEAD_CACHE_SIZE = 512;

async function headOf(guard: PathGuard, sibling: Sibling): Promise<string | undefined> {
  const key = `${sibling.dev}:${sibling.ino}:${sibling.size}:${sibling.mtimeMs}`;
  const cached = headCache.get(key);
  if (cached !== undefined) return cached;
  let head: string | undefined;
  try {
    head = await withLog(guard, sibling.path, async (copy) => {
      if (copy.ino !== sibling.ino || copy.dev !== sibling.dev) return undefined;
      if (!copy.compressed) return digest(await readAt(copy, 0, Math.min(HEAD_BYTES, copy.size)));
      const parts: Buffer[] = [];
      let length = 0;
      for await (const chunk of gzipSource(copy.handle.fd, { chunkBytes: HEAD_BYTES }).lineChunks()) {
        parts.push(chunk.bytes);
        length += chunk.bytes.length;
        if (length >= HEAD_BYTES) break;
      }
      return digest(Buffer.concat(parts).subarray(0, HEAD_BYTES));
    });
  } catch {
    return undefined;
  }
  if (head === undefined || head === '') return undefined;
  if (headCache.size >= HEAD_CACHE_SIZE) headCache.delete(headCache.keys().next().value as string);
  headCache.set(key, head);
  return head;
}

function sameFile(log: OpenedLog, cursor: CursorState): boolean {
  if (log.dev !== cursor.dev || log.ino !== cursor.ino) return false;
  return cursor.bt === undefined || log.birthtimeMs <= 0 || cursor.bt === log.birthtimeMs;
}

function bytesOf(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
}

/** The note for rotated copies beyond what one cursor can owe. */
function unfollowed(copies: readonly Sibling[]): string {
  return `${countOf(copies.length, 'more rotated copy', 'more rotated copies')} written since the last call could not be followed in one cursor and ${copies.length === 1 ? 'is' : 'are'} not read here: ${copies.map((s) => s.name).join(', ')}. Read them with tail_log or search_logs.`;
}

function queuedOf(sibling: Sibling): Queued {
  return { dev: sibling.dev, ino: sibling.ino, n: sibling.name.slice(0, 256), ...(sibling.path.endsWith('.gz') ? {} : { sz: sibling.size }) };
}

interface QueueProgress {
  /** The copy left part-read, when one did not fit. */
  owe?: Owed;
  /** Copies not started yet, oldest first. */
  rest: Queued[];
}

/**
 * Reads rotated copies whole, oldest first, while the answer has room: each was rotated after the
 * cursor's file, so all its lines are new. A copy that cannot be found any more is named with what
 * was lost. What does not fit is left in the returned progress for the cursor.
 */
async function readQueued(
  guard: PathGuard,
  live: OpenedLog,
  queue: readonly Queued[],
  lines: string[],
  notes: string[],
  room: () => number,
  deadline: number,
): Promise<QueueProgress> {
  if (queue.length === 0) return { rest: [] };
  const siblings = await siblingsOf(live);
  for (let i = 0; i < queue.length; i++) {
    const item = queue[i] as Queued;
    if (room() <= 0 || Date.now() > deadline) return { rest: queue.slice(i) };
    const sibling = siblings.find((s) => s.ino === item.ino && s.dev === item.dev);
    const tail = sibling ? await tailOf(guard, sibling, 0, room(), undefined, deadline) : undefined;
    if (!sibling || !tail) {
      const size = item.sz !== undefined ? ` (${countOf(item.sz, 'byte')})` : '';
      notes.push(`${item.n}${size}, a rotated copy written after the cursor, could not be read: it was removed or compressed again since it was seen. Its lines are missing from these answers.`);
      continue;
    }
    lines.push(...tail.lines);
    notes.push(`${countOf(tail.lines.length, 'line')} came from ${sibling.name}, rotated since the last call.`);
    if (tail.more) {
      const left = tail.size !== undefined ? countOf(tail.size - tail.end, 'byte') : 'More';
      notes.push(`${left} of ${sibling.name} did not fit in this answer: call again with the cursor for them.`);
      return { owe: { dev: sibling.dev, ino: sibling.ino, off: tail.end, ...(tail.size !== undefined ? { end: tail.size } : {}) }, rest: queue.slice(i + 1) };
    }
  }
  return { rest: [] };
}

export async function readNewLines(guard: PathGuard, userPath: string, cursorText: string | undefined, maxBytes: number): Promise<NewLinesResult> {
  const cursor = cursorText === undefined ? undefined : decodeNewLinesCursor(cursorText);
  const now = Date.now();
  const deadline = now + COPY_BUDGET_MS;
  let log: OpenedLog | undefined;
  try {
    return await withLog(guard, userPath, async (opened) => {
      log = opened;
      if (opened.compressed) throw ToolError.invalidArgument(`${userPath} is compressed and does not grow; read it with tail_log or search_logs.`);
      if (!cursor) {
        return {
          status: 'started',
          lines: [],
          cursor: encode(await state(guard, opened, opened.size, now)),
          more: false,
          notes: [`Following ${userPath} from its current end. Call read_new_lines again with this cursor to get the lines appended since.`],
        };
      }
      const live = path.basename(userPath);
      const notes: string[] = [];
      const lines: string[] = [];
      /** Room left in this answer; a copy is started with at least 1 KiB (a line longer than that comes in pieces). */
      const used = (): number => bytesOf(lines);
      const room = (): number => (lines.length === 0 ? Math.max(1024, maxBytes) : maxBytes - used() < 1024 ? 0 : maxBytes - used());
      const pending = (progress: QueueProgress, base: CursorState): NewLinesResult => {
        const { owe: _owe, nx: _nx, ...rest } = base;
        const next: CursorState = { ...rest, ...(progress.owe ? { owe: progress.owe } : {}), ...(progress.rest.length > 0 ? { nx: progress.rest } : {}) };
        if (!progress.owe) notes.push(`${countOf(progress.rest.length, 'rotated copy', 'rotated copies')} (${progress.rest.map((q) => q.n).join(', ')}) still to come: call again with the cursor; the new lines of ${live} follow them.`);
        return { status: 'appended', lines, cursor: encode(next), more: true, notes };
      };

      // What an earlier answer still owed of rotated copies comes first.
      if (cursor.owe) {
        const { owe } = cursor;
        const sibling = (await siblingsOf(opened)).find((s) => s.ino === owe.ino && s.dev === owe.dev);
        const tail = sibling ? await tailOf(guard, sibling, owe.off, room(), undefined, deadline) : undefined;
        if (sibling && tail) {
          lines.push(...tail.lines);
          notes.push(`${countOf(tail.lines.length, 'line')} came from ${sibling.name}, the rest of the rotated file.`);
          if (tail.more) {
            const left = tail.size !== undefined ? countOf(tail.size - tail.end, 'byte') : 'more';
            notes.push(`${left} of ${sibling.name} still to come: call again with the cursor; the new lines of ${live} follow them.`);
            return { status: 'appended', lines, cursor: encode({ ...cursor, owe: { dev: owe.dev, ino: owe.ino, off: tail.end, ...(tail.size !== undefined ? { end: tail.size } : {}) } }), more: true, notes };
          }
        } else {
          const missing = owe.end !== undefined ? countOf(owe.end - owe.off, 'byte') : 'The rest';
          notes.push(`${missing} of the rotated file the last answer was reading could not be read: it was removed or compressed again since. Lines written to it may be missing.`);
        }
      }
      if (cursor.nx) {
        const progress = await readQueued(guard, opened, cursor.nx, lines, notes, room, deadline);
        if (progress.owe || progress.rest.length > 0) return pending(progress, cursor);
      }

      let status: NewLinesStatus = 'appended';
      let from = cursor.off;
      /** Why the live file is not the one the cursor was in any more (undefined: plain growth, as far as the file shows). */
      let change: 'rotated' | 'shorter' | 'rewritten' | 'regrown' | undefined;
      if (!sameFile(opened, cursor)) change = 'rotated';
      else if (opened.size < cursor.off) change = 'shorter';
      else if (!sameMarks(await marksOf(opened, cursor.off), { fp: cursor.fp, ...(cursor.hd !== undefined ? { hd: cursor.hd } : {}) })) change = 'regrown';
      else if (cursor.off > 0 && cursor.sz !== undefined && cursor.mt !== undefined && opened.size === cursor.sz && opened.mtimeMs !== cursor.mt) change = 'rewritten';

      // The lines written between the cursor and the rotation are in the rotated copy, if anywhere.
      // Without any sign in the live file, a copy made since the cursor with the same content still
      // reveals a copytruncate followed by identical writes.
      const budget = Math.max(1024, room());
      const found =
        change !== undefined || cursor.at !== undefined
          ? await findCopy(guard, opened, cursor, budget, deadline, change === 'rotated')
          : undefined;
      // (At offset 0 a copy made since is always a copytruncate: nothing to repeat.)
      const identical = found !== undefined && change === undefined && cursor.off > 0;
      if (found && change === undefined && cursor.off === 0) change = 'regrown';
      if (identical) change = 'regrown';
      if (change !== undefined) {
        status = change === 'rotated' ? 'rotated' : 'truncated';
        from = 0;
      }
      if (found) {
        const { sibling, tail } = found;
        lines.push(...tail.lines);
        const how =
          change === 'rotated'
            ? `The log was rotated: the file the cursor was in is now ${sibling.name}.`
            : `The log was copied to ${sibling.name} and truncated (copytruncate rotation) since the last call.`;
        notes.push(
          tail.lines.length === 0
            ? `${how} Nothing was written to it after the cursor; the lines come from the start of the new ${live}.`
            : `${how} ${countOf(tail.lines.length, 'line')} written before the rotation came from the end of ${sibling.name}, the rest from the start of the new ${live}.`,
        );
        if (found.unsure) {
          notes.push(
            `Every rotated copy there is now was made since the last call: if the log was rotated more often than it keeps copies, lines of the copies already removed may be missing.`,
          );
        }
        if (identical) {
          notes.push(`${live} has been written again since, starting with the same bytes as before: if it was only copied and not truncated, some lines are repeated.`);
        }
        if (tail.more) {
          const left = tail.size !== undefined ? countOf(tail.size - tail.end, 'byte') : 'More';
          notes.push(`${left} of ${sibling.name} did not fit in this answer: call again with the cursor for them; the new lines of ${live} follow.`);
          const owe: Owed = { dev: sibling.dev, ino: sibling.ino, off: tail.end, ...(tail.size !== undefined ? { end: tail.size } : {}) };
          const queue = found.newer.slice(0, MAX_QUEUED).map(queuedOf);
          if (found.newer.length > MAX_QUEUED) notes.push(unfollowed(found.newer.slice(MAX_QUEUED)));
          return { status, lines, cursor: encode({ ...(await state(guard, opened, 0, now, owe)), ...(queue.length > 0 ? { nx: queue } : {}) }), more: true, notes };
        }
        if (found.newer.length > 0) {
          const queue = found.newer.slice(0, MAX_QUEUED).map(queuedOf);
          if (found.newer.length > MAX_QUEUED) notes.push(unfollowed(found.newer.slice(MAX_QUEUED)));
          notes.push(`The log was rotated ${countOf(found.newer.length + 1, 'time')} since the last call: ${found.newer.map((s) => s.name).join(', ')} ${found.newer.length === 1 ? 'was' : 'were'} read whole after ${sibling.name}, oldest first.`);
          const progress = await readQueued(guard, opened, queue, lines, notes, room, deadline);
          if (progress.owe || progress.rest.length > 0) {
            const result = pending(progress, await state(guard, opened, 0, now));
            return { ...result, status };
          }
        }
      } else if (change === 'rotated') {
        notes.push(
          'The log was rotated and no rotated copy holds the file the cursor was in (it was removed, or its content changed): lines written to it after the cursor may be missing. Reading the new file from its start.',
        );
      } else if (change === 'shorter') {
        notes.push(
          'The log was truncated (copytruncate rotation, or emptied) and no rotated copy holds the lines after the cursor: lines written between the last call and the truncation may be missing. Reading it again from its start.',
        );
      } else if (change === 'regrown') {
        notes.push(
          'The log was truncated and has grown again since (copytruncate rotation), and no rotated copy holds the lines after the cursor: lines written between the last call and the truncation may be missing. Reading it from its start.',
        );
      } else if (change === 'rewritten') {
        notes.push(`${live} was rewritten in place since the last call (the same size, a newer modification time): reading it again from its start.`);
      }
      if (!found && change !== undefined && change !== 'rewritten' && cursor.at !== undefined) {
        // The file the cursor was in is gone (rotated out of the kept copies): every copy written
        // since the cursor was rotated after it, so all its lines are new.
        const written = await writtenSince(guard, await siblingsOf(opened), cursor);
        if (written.length > 0) {
          const queue = written.slice(0, MAX_QUEUED).map(queuedOf);
          if (written.length > MAX_QUEUED) notes.push(unfollowed(written.slice(MAX_QUEUED)));
          notes.push(`${written.map((s) => s.name).join(', ')} ${written.length === 1 ? 'was' : 'were'} written since the last call and ${written.length === 1 ? 'is' : 'are'} read whole, oldest first, before the new ${live}.`);
          const progress = await readQueued(guard, opened, queue, lines, notes, room, deadline);
          if (progress.owe || progress.rest.length > 0) return { ...pending(progress, await state(guard, opened, 0, now)), status };
        }
      }
      if (room() === 0 && opened.size > from) {
        notes.push(`The new lines of ${live} did not fit in this answer: call again with the cursor for them.`);
        return { status, lines, cursor: encode(await state(guard, opened, from, now)), more: true, notes };
      }
      const chunk = await readFrom(opened, from, room(), false);
      lines.push(...chunk.lines);
      if (status === 'appended' && lines.length === 0) status = 'unchanged';
      if (chunk.more) notes.push('More was appended than fitted in one answer: call again with the cursor for the rest.');
      return { status, lines, cursor: encode(await state(guard, opened, chunk.end, now)), more: chunk.more, notes };
    });
  } catch (error) {
    // Between a rotation's rename and the new file's creation the path does not exist: keep the cursor.
    if (cursor && !log && error instanceof ToolError && error.kind === 'not_found') {
      return {
        status: 'missing',
        lines: [],
        cursor: cursorText as string,
        more: false,
        notes: [`${userPath} does not exist right now (a rotation may be under way). Call again with the same cursor.`],
      };
    }
    throw error;
  }
}
