/** Shaping a bounded query result for the client: a text table and the structured form. */
import { z } from 'zod';
import type { BoundedResult } from './bounded-query.js';
import type { Transaction } from './database.js';
import type { JsonValue } from './values.js';

/**
 * Cells are JSON values produced by our own converters; validating each one against a recursive
 * union on every call costs more than the query itself, so the schema only says "any JSON".
 */
const jsonValue = z.custom<JsonValue>(() => true);

export const QUERY_OUTPUT = z.object({
  columns: z.array(z.object({ name: z.string(), type: z.string() })).describe('Result columns, in order, with their PostgreSQL type.'),
  rows: z.array(z.array(jsonValue)).describe('Rows as arrays aligned with columns. bigint/numeric are strings, bytea is base64, timestamps ISO 8601.'),
  rowCount: z.number().int().describe('Rows returned here (or affected, for a write without RETURNING).'),
  truncated: z.boolean().describe('True when more rows existed than were returned (row or byte cap).'),
  command: z.string().optional().describe('The command tag, e.g. SELECT or UPDATE.'),
});

export type QueryOutput = z.output<typeof QUERY_OUTPUT>;

/** Widest a cell gets in the text table; the structured rows keep full values. */
const CELL_CHARS = 200;

export async function shapeResult(tx: Transaction, result: BoundedResult, limits: { maxRows: number; maxBytes: number }): Promise<{ text: string; structured: QueryOutput }> {
  const names = await tx.typeNames(result.fields.map((f) => f.dataTypeID));
  const columns = result.fields.map((f) => ({ name: f.name, type: names.get(f.dataTypeID) ?? 'unknown' }));
  const returnsRows = columns.length > 0;
  const rowCount = returnsRows ? result.rows.length : (result.rowCount ?? 0);
  const structured: QueryOutput = { columns, rows: result.rows, rowCount, truncated: result.truncated, ...(result.command ? { command: result.command } : {}) };
  const lines: string[] = [];
  if (returnsRows) {
    lines.push(columns.map((c) => c.name).join(' | '));
    lines.push(columns.map(() => '---').join(' | '));
    // Escaping can make the text larger than the rows it shows; keep it within the same budget.
    let textBytes = 0;
    for (const [index, row] of result.rows.entries()) {
      const line = row.map(renderCell).join(' | ');
      textBytes += Buffer.byteLength(JSON.stringify(line));
      if (textBytes > limits.maxBytes) {
        lines.push(`… (the text table stops at row ${index}; structuredContent has all ${result.rows.length} rows)`);
        break;
      }
      lines.push(line);
    }
    lines.push('');
    lines.push(`(${rowCount} row${rowCount === 1 ? '' : 's'}${result.truncated ? ', truncated' : ''})`);
  } else {
    lines.push(`${result.command ?? 'OK'}${result.rowCount !== null ? ` (${result.rowCount} row${result.rowCount === 1 ? '' : 's'} affected)` : ''}`);
  }
  if (result.notices.length > 0) lines.push('', ...result.notices);
  if (result.truncated) {
    const why = result.truncatedBy === 'bytes' ? `the ${Math.round(limits.maxBytes / 1024)} KiB size cap` : `the ${limits.maxRows}-row cap`;
    lines.push(`The result was cut at ${why}; more rows exist. Add WHERE/LIMIT/OFFSET or aggregate to see the rest.`);
  }
  return { text: lines.join('\n'), structured };
}

function renderCell(value: JsonValue): string {
  let text = value === null ? 'NULL' : typeof value === 'string' ? value : JSON.stringify(value);
  text = text.replace(/\r?\n/g, '\\n').replace(/\|/g, '\\|');
  return text.length > CELL_CHARS ? `${text.slice(0, CELL_CHARS - 1)}…` : text;
}
