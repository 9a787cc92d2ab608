import { z } from 'zod';
import { ToolError, nestedQuantifier } from '@suite/shared';
import { LEVELS } from './levels.js';
import { escapeRegExp } from './search.js';
import { formatDuration, parsePointInTime } from './timestamps.js';

/** Argument schemas and checks the tools share, so they are described and refused the same way. */

export const levelArg = z.enum(LEVELS).describe(`Only entries at this level or above: ${LEVELS.join(' < ')}.`);

export const sinceArg = z
  .string()
  .min(1)
  .max(64)
  .describe('Only entries at or after this time: a duration back from now (15m, 2h, 7d) or an ISO 8601 time (2024-01-15T10:00:00Z; without a zone it is the server\'s local time).');

export const untilArg = z.string().min(1).max(64).describe('Only entries at or before this time: same forms as since.');

export const pathArg = z.string().min(1).max(4096).describe('The log file: an absolute path as list_logs shows it, or logs://journal (the journal) or logs://journal/<unit>.');

export const MAX_PATTERN_LENGTH = 1000;

/** A user's since/until as milliseconds, or an actionable error naming the argument. */
export function pointInTime(name: string, value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const t = parsePointInTime(value, now);
  if (t === undefined) {
    throw ToolError.invalidArgument(
      `${name}: ${JSON.stringify(value)} is not a time. Use a duration back from now (15m, 2h, 7d) or an ISO 8601 time such as 2024-01-15T10:00:00Z.`,
    );
  }
  return t;
}

export function timeWindow(since: string | undefined, until: string | undefined): { since?: number; until?: number } {
  const now = Date.now();
  const from = pointInTime('since', since, now);
  const to = pointInTime('until', until, now);
  if (from !== undefined && to !== undefined && from > to) {
    throw ToolError.invalidArgument(`since (${new Date(from).toISOString()}) is after until (${new Date(to).toISOString()}): swap them.`);
  }
  return { ...(from !== undefined ? { since: from } : {}), ...(to !== undefined ? { until: to } : {}) };
}

/**
 * Checks a search pattern before a scan starts: the syntax, and the shape that backtracks
 * catastrophically. What slips through is bounded by the time budget.
 */
export function checkPattern(pattern: string, literal: boolean, caseSensitive: boolean): void {
  if (pattern.includes('\n')) throw ToolError.invalidArgument('pattern must not contain a line break: entries are matched line by line.');
  if (literal) return;
  const nested = nestedQuantifier(pattern);
  if (nested) {
    throw ToolError.invalidArgument(
      `The regular expression has a repeated group that itself repeats (${nested}); on some lines that takes exponential time, so it is refused. ` +
        'Rewrite it without nesting (for example (ab)+ or a+ instead of (a+)+), or pass literal: true.',
    );
  }
  try {
    new RegExp(literal ? escapeRegExp(pattern) : pattern, caseSensitive ? '' : 'i');
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : 'invalid';
    throw ToolError.invalidArgument(`Invalid regular expression ${JSON.stringify(pattern)}: ${reason}. Pass literal: true to search for the text as it is.`);
  }
}

export function budgetArg(defaultMs: number, maxMs: number) {
  return z
    .number()
    .int()
    .min(1)
    .max(maxMs / 1000)
    .optional()
    .describe(`Stop after this many seconds and return what was found so far (default ${formatDuration(defaultMs)}, at most ${formatDuration(maxMs)}).`);
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Most field filters in one call. */
export const MAX_FIELD_FILTERS = 20;

export const fieldsArg = z
  .record(z.string().min(1).max(200), z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]))
  .refine((r) => Object.keys(r).length <= MAX_FIELD_FILTERS, { message: `At most ${MAX_FIELD_FILTERS} field filters.` })
  .describe(
    'Only entries whose fields match (JSON lines and logfmt; a plain-text entry matches none). A key is a field name as written ("log.level") ' +
      'or a dotted path into nested objects ("http.status"). A value matches exactly (a number also matches its text: 500 matches "500"), ' +
      'or compares when it starts with >=, <=, >, < (numbers as numbers, anything else as text) or != (also true when the field is absent); ' +
      'start with = for an exact value that begins with one of those. Example: {"service": "api", "status": ">=500"}.',
  );

export const groupByArg = z.string().min(1).max(200).describe('A field (as in fields) to count entries per value of: the largest groups first; "(none)" counts the entries without it.');
