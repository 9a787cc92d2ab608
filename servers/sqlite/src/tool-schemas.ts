import { z } from 'zod';
import type { SqliteLimits } from './database.js';

/** A bound value: text, number, boolean (as 0/1), NULL, or a BLOB as { $blob: base64 }. */
const PARAM_VALUE = z.union([z.string(), z.number(), z.boolean(), z.null(), z.object({ $blob: z.base64() }).strict()]);

export const PARAMS = z
  .union([z.array(PARAM_VALUE).max(32_766), z.record(z.string().regex(/^[:@$]?[A-Za-z_][A-Za-z0-9_]*$/, 'a parameter name such as "id" or ":id"'), PARAM_VALUE)])
  .optional()
  .describe('Values for ? placeholders (an array, in order) or for :name/@name/$name placeholders (an object). BLOBs as {"$blob": "<base64>"}.');

export const SQL = z.string().min(1).max(1_000_000);

/**
 * The statement argument: `query`, as the official SQLite server names it, with `sql` (this
 * server's earlier name) still accepted. Both are optional in the schema (a top-level anyOf would
 * say "one of them" exactly, but some clients refuse tool schemas with one); `requireStatement`
 * enforces exactly one, and `statementOf` picks it.
 */
export function statementArguments(what: string): { query: z.ZodOptional<typeof SQL>; sql: z.ZodOptional<typeof SQL> } {
  return {
    query: SQL.optional().describe(`${what} (required; sql is accepted as its older name)`),
    sql: SQL.optional().describe('Older name of query, still accepted. Give query or sql, not both.'),
  };
}

/** Adds the rule to a tool's input: a statement, as `query` or `sql`; both only when they are the same text. */
export function requireStatement<T extends z.ZodObject<{ query: z.ZodOptional<typeof SQL>; sql: z.ZodOptional<typeof SQL> } & z.ZodRawShape>>(schema: T): T {
  return schema.superRefine((args, ctx) => {
    const { query, sql } = args as { query?: string; sql?: string };
    if (query === undefined && sql === undefined) {
      ctx.addIssue({ code: 'custom', path: ['query'], message: 'required: give the SQL statement as query (sql is accepted as its older name)' });
    } else if (query !== undefined && sql !== undefined && query !== sql) {
      ctx.addIssue({ code: 'custom', path: ['sql'], message: 'query and sql were both given and differ; give the statement once, as query' });
    }
  });
}

/** The statement of a call whose input passed requireStatement. */
export function statementOf(args: { query?: string | undefined; sql?: string | undefined }): string {
  return (args.query ?? args.sql)!;
}

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
