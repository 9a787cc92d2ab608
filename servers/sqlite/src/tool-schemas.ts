import { z } from 'zod';
import type { SqliteLimits } from './database.js';

/** A bound value: text, number, boolean (as 0/1), NULL, or a BLOB as { $blob: base64 }. */
const PARAM_VALUE = z.union([z.string(), z.number(), z.boolean(), z.null(), z.object({ $blob: z.base64() }).strict()]);

export const PARAMS = z
  .union([z.array(PARAM_VALUE).max(32_766), z.record(z.string().regex(/^[:@$]?[A-Za-z_][A-Za-z0-9_]*$/, 'a parameter name such as "id" or ":id"'), PARAM_VALUE)])
  .optional()
  .describe('Values for ? placeholders (an array, in order) or for :name/@name/$name placeholders (an object). BLOBs as {"$blob": "<base64>"}.');

export const SQL = z.string().min(1).max(1_000_000);

/** One result cell: 64-bit integers beyond 2^53 as decimal strings, BLOBs as { $blob: base64 }. */
export const CELL = z.union([z.string(), z.number(), z.null(), z.object({ $blob: z.string() })]);

export const ROWS_OUTPUT = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.array(CELL)),
  rowCount: z.number().int(),
  truncated: z.boolean(),
});

export function maxRowsArg(limits: SqliteLimits): z.ZodOptional<z.ZodNumber> {
  return z
    .number()
    .int()
    .min(1)
    .max(limits.hardMaxRows)
    .optional()
    .describe(`Most rows to return (default ${limits.defaultMaxRows}, at most ${limits.hardMaxRows}). More rows are reported as truncated.`);
}

export function timeoutArg(limits: SqliteLimits): z.ZodOptional<z.ZodNumber> {
  const max = Math.max(1, Math.floor(limits.timeoutMs / 1000));
  return z
    .number()
    .int()
    .min(1)
    .max(max)
    .optional()
    .describe(`Stop the query after this many seconds (default and maximum ${max}).`);
}

export function callTimeoutMs(limits: SqliteLimits, seconds: number | undefined): number {
  return seconds === undefined ? limits.timeoutMs : Math.min(limits.timeoutMs, seconds * 1000);
}
