import type { Cell } from './executor.js';

const MAX_COLUMN_WIDTH = 40;

/** A cell as a person reads it: NULL, numbers as digits, BLOBs by size. */
function cellText(cell: Cell): string {
  if (cell === null) return 'NULL';
  if (typeof cell === 'object') return `<blob ${Math.floor((cell.$blob.length * 3) / 4) - (cell.$blob.endsWith('==') ? 2 : cell.$blob.endsWith('=') ? 1 : 0)} bytes>`;
  if (typeof cell === 'number') return String(cell);
  // Most values hold neither a line break nor a pipe; skip the rewriting for them.
  if (!/[\n|]/.test(cell)) return cell;
  return cell.replace(/\r?\n/g, '\\n').replace(/\|/g, '\\|');
}

/**
 * A compact pipe table: columns padded to their widest value up to a limit (longer values run
 * on rather than being cut, since the text is what the model reads).
 */
export function renderTable(columns: string[], rows: Cell[][]): string {
  const header = columns.map((c) => c.replace(/\|/g, '\\|'));
  const body = rows.map((row) => row.map(cellText));
  const widths = header.map((h, i) => Math.min(MAX_COLUMN_WIDTH, Math.max(h.length, ...body.map((r) => r[i]?.length ?? 0))));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(Math.max(1, w))).join('-+-'), ...body.map(line)].join('\n');
}
