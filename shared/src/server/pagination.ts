import { z } from 'zod';
import { ToolError } from '../core/errors.js';

/**
 * Opaque cursors: base64url of a small JSON document with a version tag, so a client cannot
 * mistake them for offsets it may edit, and so a cursor from another list is refused.
 */
export function encodeCursor(kind: string, state: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: 1, k: kind, s: state }), 'utf8').toString('base64url');
}

/**
 * The state inside a cursor this server issued for the list `kind`. Anything else is the client's
 * mistake: an invalid_argument ToolError, which a tool answers as isError and a list request
 * (resources/list) as -32602.
 */
export function decodeCursor<T extends z.ZodType>(kind: string, cursor: string, schema: T): z.infer<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw ToolError.invalidArgument('Invalid cursor: it was not issued by this server.');
  }
  const envelope = z.object({ v: z.literal(1), k: z.string(), s: z.unknown() }).safeParse(parsed);
  if (!envelope.success || envelope.data.k !== kind) {
    throw ToolError.invalidArgument('Invalid cursor: it was not issued for this list.');
  }
  const state = schema.safeParse(envelope.data.s);
  if (!state.success) throw ToolError.invalidArgument('Invalid cursor: its state is malformed.');
  return state.data;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

const offsetState = z.object({ offset: z.number().int().min(0) });

/** Offset pagination over an in-memory list, with an opaque cursor. */
export function paginate<T>(kind: string, items: readonly T[], cursor: string | undefined, pageSize: number): Page<T> {
  const offset = cursor === undefined ? 0 : decodeCursor(kind, cursor, offsetState).offset;
  const page = items.slice(offset, offset + pageSize);
  const next = offset + page.length;
  return next < items.length ? { items: page, nextCursor: encodeCursor(kind, { offset: next }) } : { items: page };
}
