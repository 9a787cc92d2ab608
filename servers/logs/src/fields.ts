import { fieldOf } from './formats/parsers.js';

/**
 * Filters on the fields of structured entries (JSON lines, logfmt) and grouping by a field. A leaf
 * of the package (with the parsers): the scan worker runs the same code as the main thread.
 *
 * A filter is a field name (a key as written, or a dotted path into nested objects) and a value:
 * a number, boolean or null matches that value; a string matches the field's text exactly, unless
 * it starts with an operator: `>=500`, `<=2`, `>0.5`, `<100` (numbers compare as numbers, anything
 * else as text), `!=GET` (also true when the field is absent), `=>x` (exactly the text `>x`).
 * An entry without fields (a plain-text line) matches no filter.
 */

export type FieldOp = '=' | '!=' | '>' | '>=' | '<' | '<=';
export type FieldValue = string | number | boolean | null;

export interface FieldFilter {
  field: string;
  op: FieldOp;
  value: FieldValue;
}

const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export function parseFieldFilters(fields: Readonly<Record<string, FieldValue>>): FieldFilter[] {
  return Object.entries(fields).map(([field, raw]) => {
    if (typeof raw !== 'string') return { field, op: '=', value: raw };
    const m = /^(>=|<=|!=|>|<|=)(.*)$/s.exec(raw);
    if (!m) return { field, op: '=', value: raw };
    const op = m[1] as FieldOp;
    const text = (m[2] as string).trim();
    if (op === '=' || op === '!=') return { field, op, value: op === '=' ? (m[2] as string) : text };
    return { field, op, value: NUMBER.test(text) ? Number(text) : text };
  });
}

/** The text of a field's value as shown and grouped: strings as they are, anything else as JSON. */
export function fieldText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && NUMBER.test(value.trim())) return Number(value);
  return undefined;
}

function matchesOne(record: Record<string, unknown>, filter: FieldFilter): boolean {
  const value = fieldOf(record, filter.field);
  const { op, value: wanted } = filter;
  if (op === '=' || op === '!=') {
    let equal: boolean;
    if (value === undefined) equal = false;
    else if (typeof wanted === 'number') equal = numberOf(value) === wanted;
    else if (typeof wanted === 'string') equal = fieldText(value) === wanted || (typeof value === 'number' && numberOf(wanted) === value);
    else equal = value === wanted;
    return op === '=' ? equal : !equal;
  }
  if (value === undefined || value === null) return false;
  let order: number;
  if (typeof wanted === 'number') {
    const n = numberOf(value);
    if (n === undefined) return false;
    order = n - wanted;
  } else {
    const text = fieldText(value) as string;
    order = text < String(wanted) ? -1 : text > String(wanted) ? 1 : 0;
  }
  return op === '>' ? order > 0 : op === '>=' ? order >= 0 : op === '<' ? order < 0 : order <= 0;
}

/** Whether an entry's fields pass every filter (an entry without fields passes none). */
export function fieldsMatch(record: Record<string, unknown> | undefined, filters: readonly FieldFilter[] | undefined): boolean {
  if (!filters || filters.length === 0) return true;
  if (!record) return false;
  for (const filter of filters) if (!matchesOne(record, filter)) return false;
  return true;
}

/** What a group_by field's value is called in a group: its text, or `(none)` when the entry lacks it. */
export const NO_VALUE = '(none)';
const MAX_GROUP_TEXT = 200;

export function groupOf(record: Record<string, unknown> | undefined, field: string): string {
  const text = record ? fieldText(fieldOf(record, field)) : undefined;
  if (text === undefined) return NO_VALUE;
  return text.length > MAX_GROUP_TEXT ? `${text.slice(0, MAX_GROUP_TEXT)}…` : text;
}

/**
 * Text every JSON writer puts in a line as it is: printable ASCII without quotes, backslashes, or
 * the characters Go escapes for HTML (`<`, `>`, `&`: Docker's json-file logs are written by Go).
 */
function verbatim(text: string): boolean {
  return text.length > 0 && /^[\x20-\x7e]+$/.test(text) && !/["\\<>&]/.test(text);
}

/**
 * Text a line must contain for an entry to pass the filters, looked for in raw bytes before a chunk
 * is split into lines: the key's last name (unless the format names fields the line does not spell:
 * a CRI line's `stream` and `tag`), and the value of an equality on a string (when JSON writes it
 * as is, without escapes).
 */
export function requiredTexts(filters: readonly FieldFilter[] | undefined, keysInText = true): string[] {
  const out = new Set<string>();
  for (const f of filters ?? []) {
    if (f.op === '!=') continue;
    const key = f.field.slice(f.field.lastIndexOf('.') + 1);
    if (keysInText && verbatim(key)) out.add(key);
    if (f.op === '=' && typeof f.value === 'string' && verbatim(f.value)) out.add(f.value);
  }
  return [...out];
}

/** Counts per group, bounded: past `max` distinct values, the rest are counted under `other`. */
export class GroupCounts {
  readonly counts = new Map<string, number>();
  other = 0;
  constructor(private readonly max = 1000) {}

  add(key: string, n = 1): void {
    const current = this.counts.get(key);
    if (current !== undefined) this.counts.set(key, current + n);
    else if (this.counts.size < this.max) this.counts.set(key, n);
    else this.other += n;
  }

  merge(other: { counts: ReadonlyMap<string, number> | [string, number][]; other: number }): void {
    for (const [k, n] of other.counts) this.add(k, n);
    this.other += other.other;
  }

  /** The largest groups first, ties by value. */
  top(n: number): { value: string; count: number }[] {
    return [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, n)
      .map(([value, count]) => ({ value, count }));
  }
}
