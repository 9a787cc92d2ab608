/**
 * A result grid's state and its calls through the host, without DOM (Node tests run it against
 * the real server): what a query tool showed, pages fetched with the server's app-only page tool,
 * sorting, and each cell as what it is. Shared by the SQLite and PostgreSQL grids: cells are JSON
 * values (SQLite BLOBs as { $blob }, PostgreSQL bytea as base64 text in a column typed bytea).
 */
import { resultText, type HostConnection, type ToolResult } from './rpc.js';
import { planOf, type PlanTreeNode } from './plan-model.js';

export type Cell = string | number | boolean | null | { $blob: string } | Cell[] | { [key: string]: unknown };

export interface Column {
  name: string;
  /** The database's type name, when the tool gives it (PostgreSQL). */
  type?: string;
}

export interface GridOptions {
  /** The app-only tool that reads a page. */
  pageTool: string;
  /** Its arguments for the rows from `offset`, from the arguments of the tool call shown; undefined: no paging. */
  pageArgs(toolArgs: Record<string, unknown>, offset: number, limit: number): Record<string, unknown> | undefined;
}
/** Rows fetched per page. */
export const PAGE_ROWS = 500;
/** Text longer than this is shown cut, in full on demand. */
export const LONG_TEXT = 120;

export type CellKind = 'null' | 'blob' | 'number' | 'bool' | 'json' | 'long' | 'text';

export interface CellView {
  kind: CellKind;
  /** What the cell shows (cut for long text). */
  text: string;
  /** The whole value, when the cell shows less. */
  full?: string;
}

/** How a cell reads: NULL is not the text "NULL", a BLOB is its size, JSON is marked, long text is cut. */
export function cellView(cell: Cell, type?: string): CellView {
  if (cell === null) return { kind: 'null', text: 'NULL' };
  if (isBlob(cell)) return { kind: 'blob', text: `BLOB ${blobBytes(cell.$blob)} bytes` };
  if (typeof cell === 'string' && type === 'bytea') return { kind: 'blob', text: `BLOB ${blobBytes(cell)} bytes` };
  if (typeof cell === 'boolean') return { kind: 'bool', text: String(cell) };
  if (typeof cell === 'object') {
    const json = JSON.stringify(cell);
    return json.length > LONG_TEXT ? { kind: 'json', text: `${json.slice(0, LONG_TEXT)}…`, full: json } : { kind: 'json', text: json };
  }
  if (typeof cell === 'number') return { kind: 'number', text: String(cell) };
  if (/^-?\d{16,}$/.test(cell) || (type !== undefined && /^(numeric|int8|bigint)$/.test(type) && /^-?\d/.test(cell))) return { kind: 'number', text: cell };
  if (isJson(cell)) return cell.length > LONG_TEXT ? { kind: 'json', text: `${cell.slice(0, LONG_TEXT)}…`, full: cell } : { kind: 'json', text: cell };
  if (cell.length > LONG_TEXT || cell.includes('\n')) return { kind: 'long', text: `${cell.slice(0, LONG_TEXT).split('\n')[0]}…`, full: cell };
  return { kind: 'text', text: cell };
}

function isBlob(cell: Cell): cell is { $blob: string } {
  return typeof cell === 'object' && cell !== null && !Array.isArray(cell) && typeof (cell as { $blob?: unknown }).$blob === 'string' && Object.keys(cell).length === 1;
}

function blobBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
}

function isJson(text: string): boolean {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** SQLite's order across types: NULL, numbers, text, BLOBs. */
export function compareCells(a: Cell, b: Cell): number {
  const rank = (c: Cell): number => (c === null ? 0 : typeof c === 'number' || typeof c === 'boolean' || (typeof c === 'string' && /^-?\d{16,}$/.test(c)) ? 1 : typeof c === 'string' ? 2 : 3);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return Number(a) - Number(b);
  if (ra === 2) return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  if (ra === 3) {
    const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return 0;
}

export interface GridState {
  columns: Column[];
  rows: Cell[][];
  /** More rows may exist past those loaded (the answer was cut by rows or bytes). */
  more: boolean;
  sort: { column: number; descending: boolean } | undefined;
  loading: boolean;
  error: string | undefined;
  /** When the result is a query plan: the plan as a tree, shown instead of rows. */
  plan: PlanTreeNode[] | undefined;
}

type Rows = { columns: (string | Column)[]; rows: Cell[][]; rowCount: number; truncated: boolean };

const columnsOf = (columns: (string | Column)[]): Column[] => columns.map((c) => (typeof c === 'string' ? { name: c } : c));

export class GridController {
  state: GridState = { columns: [], rows: [], more: false, sort: undefined, loading: false, error: undefined, plan: undefined };
  private args: Record<string, unknown> = {};
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly host: HostConnection,
    private readonly options: GridOptions,
  ) {
    host.on('ui/notifications/tool-input', (params) => {
      this.args = (params as { arguments?: Record<string, unknown> }).arguments ?? {};
    });
    host.on('ui/notifications/tool-result', (params) => this.showResult(params as ToolResult));
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  showResult(result: ToolResult): void {
    const s = result.structuredContent as Rows | undefined;
    if (result.isError || !s) return this.set({ error: resultText(result) || 'The query gave no rows to show.', plan: undefined });
    const plan = planOf(s);
    if (plan) return this.set({ plan, columns: [], rows: [], more: false, sort: undefined, error: undefined });
    if (!Array.isArray(s.columns) || !Array.isArray(s.rows)) return this.set({ error: 'The result has no rows to show.', plan: undefined });
    this.set({ columns: columnsOf(s.columns), rows: s.rows, more: s.truncated, sort: undefined, error: undefined, plan: undefined });
  }

  /** The rows after those loaded, within the server's row and byte caps. */
  async loadMore(): Promise<void> {
    const args = this.options.pageArgs(this.args, this.state.rows.length, PAGE_ROWS);
    if (!args || this.state.loading) return;
    this.set({ loading: true });
    try {
      const result = await this.host.callTool(this.options.pageTool, args);
      if (result.isError) return this.set({ loading: false, error: resultText(result) });
      const s = result.structuredContent as Rows;
      const rows = [...this.state.rows, ...s.rows];
      this.set({ rows: this.state.sort ? sorted(rows, this.state.sort) : rows, more: s.truncated, loading: false, error: undefined });
    } catch (error) {
      this.set({ loading: false, error: `${this.options.pageTool} could not be called: ${(error as Error).message}` });
    }
  }

  /** Sorts by a column: ascending, then descending on the next click. */
  sortBy(column: number): void {
    const descending = this.state.sort?.column === column ? !this.state.sort.descending : false;
    const sort = { column, descending };
    this.set({ sort, rows: sorted(this.state.rows, sort) });
  }

  private set(patch: Partial<GridState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }
}

function sorted(rows: Cell[][], sort: { column: number; descending: boolean }): Cell[][] {
  const sign = sort.descending ? -1 : 1;
  return rows
    .map((row, i) => [row, i] as const)
    .sort(([a, i], [b, j]) => sign * compareCells(a[sort.column] ?? null, b[sort.column] ?? null) || i - j)
    .map(([row]) => row);
}
