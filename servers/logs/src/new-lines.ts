import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, encodeCursor, type PathGuard } from '@suite/shared';
import { withLog, type OpenedLog } from './access.js';
import { NEWLINE, utf8Boundary } from './chunks.js';
import { familyOf } from './discovery.js';

/**
 * What was appended to a log since a cursor, for clients that do not subscribe. The cursor holds
 * the file's identity (device, inode), a byte offset at a line boundary, and a fingerprint of the
 * bytes just before it; that is how a rotation (another inode at the path), a truncation (the
 * file is shorter than the offset) and a truncate-then-regrow (copytruncate followed by enough new
 * writes: the bytes before the offset changed) are told apart from plain growth. After a rotation
 * the old file is found among the rotated siblings by its inode, and its last lines come first.
 */

const FINGERPRINT_BYTES = 64;

/** `bt`: the file's birth time where the filesystem records one; it tells a new file that reused a freed inode from the old one. */
const cursorState = z.object({ dev: z.number(), ino: z.number(), bt: z.number().optional(), off: z.number().int().min(0), fp: z.string() });
type CursorState = z.infer<typeof cursorState>;

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

async function fingerprint(log: OpenedLog, offset: number): Promise<string> {
  const length = Math.min(FINGERPRINT_BYTES, offset);
  if (length === 0) return '';
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await log.handle.read(buffer, 0, length, offset - length);
  return createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('base64url').slice(0, 16);
}

interface Chunk {
  lines: string[];
  /** Offset just past the last byte taken. */
  end: number;
  more: boolean;
}

/**
 * Whole lines from `offset`, up to `maxBytes`. A line still being written (no newline yet) is
 * left for next time, unless `final` (a rotated file, which will not grow any more).
 */
async function readFrom(log: OpenedLog, offset: number, maxBytes: number, final: boolean): Promise<Chunk> {
  const available = log.size - offset;
  if (available <= 0) return { lines: [], end: offset, more: false };
  const length = Math.min(available, maxBytes);
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await log.handle.read(buffer, 0, length, offset);
  const data = buffer.subarray(0, bytesRead);
  const lastNewline = data.lastIndexOf(NEWLINE);
  let take: number;
  if (lastNewline !== -1) take = lastNewline + 1;
  else if (length < available) take = utf8Boundary(data, data.length); // one line longer than maxBytes: give it in pieces
  else take = 0;
  if (final && length === available) take = data.length;
  const text = data.toString('utf8', 0, take);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { lines: lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)), end: offset + take, more: offset + take < log.size && take > 0 && length < available };
}

async function state(log: OpenedLog, offset: number): Promise<CursorState> {
  return { dev: log.dev, ino: log.ino, ...(log.birthtimeMs > 0 ? { bt: log.birthtimeMs } : {}), off: offset, fp: await fingerprint(log, offset) };
}

function sameFile(log: OpenedLog, cursor: CursorState): boolean {
  if (log.dev !== cursor.dev || log.ino !== cursor.ino) return false;
  return cursor.bt === undefined || log.birthtimeMs <= 0 || cursor.bt === log.birthtimeMs;
}

/** The rotated sibling that is the file the cursor was in (same device and inode), if it is still there uncompressed. */
async function findRotated(real: string, cursor: CursorState): Promise<string | undefined> {
  const members = await familyOf(path.join(path.dirname(real), path.basename(real)));
  for (const member of members) {
    if (member.path === real || member.rotation.compressed) continue;
    const stat = await lstat(member.path).catch(() => undefined);
    if (stat && stat.ino === cursor.ino && stat.dev === cursor.dev) return member.path;
  }
  return undefined;
}

export async function readNewLines(guard: PathGuard, userPath: string, cursorText: string | undefined, maxBytes: number): Promise<NewLinesResult> {
  const cursor = cursorText === undefined ? undefined : decodeNewLinesCursor(cursorText);
  let log: OpenedLog | undefined;
  try {
    return await withLog(guard, userPath, async (opened) => {
      log = opened;
      if (opened.compressed) throw ToolError.invalidArgument(`${userPath} is compressed and does not grow; read it with tail_log or search_logs.`);
      if (!cursor) {
        return {
          status: 'started',
          lines: [],
          cursor: encode(await state(opened, opened.size)),
          more: false,
          notes: [`Following ${userPath} from its current end. Call read_new_lines again with this cursor to get the lines appended since.`],
        };
      }
      const notes: string[] = [];
      const lines: string[] = [];
      let status: NewLinesStatus = 'appended';
      let from = cursor.off;
      if (!sameFile(opened, cursor)) {
        status = 'rotated';
        from = 0;
        const old = await findRotated(opened.real, cursor);
        if (old) {
          const name = path.basename(old);
          const previous = await withLog(guard, old, async (rotated) => readFrom(rotated, Math.min(cursor.off, rotated.size), maxBytes, true));
          lines.push(...previous.lines);
          notes.push(
            `The log was rotated: the file the cursor was in is now ${name}. ${previous.lines.length} line${previous.lines.length === 1 ? '' : 's'} came from the end of ${name}, the rest from the start of the new ${path.basename(userPath)}.`,
          );
          if (previous.more) {
            notes.push(`More is left in ${name} than fitted; read it with read_log_range. The cursor continues in the new file.`);
          }
        } else {
          notes.push('The log was rotated and the previous file is gone (compressed or removed): lines written to it after the cursor may be missing. Reading the new file from its start.');
        }
      } else if (opened.size < cursor.off) {
        status = 'truncated';
        from = 0;
        notes.push('The log was truncated (copytruncate rotation, or emptied): reading it again from its start.');
      } else if ((await fingerprint(opened, cursor.off)) !== cursor.fp) {
        status = 'truncated';
        from = 0;
        notes.push('The log was truncated and has grown again since (copytruncate rotation): reading it from its start.');
      }
      const budget = Math.max(1024, maxBytes - lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
      const chunk = await readFrom(opened, from, budget, false);
      lines.push(...chunk.lines);
      if (status === 'appended' && lines.length === 0) status = 'unchanged';
      if (chunk.more) notes.push('More was appended than fitted in one answer: call again with the cursor for the rest.');
      return { status, lines, cursor: encode(await state(opened, chunk.end)), more: chunk.more, notes };
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
