/**
 * A query plan as a tree, from whatever result carries one (no DOM, so Node tests run it):
 * PostgreSQL's EXPLAIN (FORMAT JSON) (explain_query's structured plan, or a query of EXPLAIN
 * (FORMAT JSON) through the grid) and SQLite's EXPLAIN QUERY PLAN rows (explain_query's steps, or
 * read_query of EXPLAIN QUERY PLAN). Labels and details are plain text: the view writes them as text.
 */
export interface PlanTreeNode {
  /** What the step does, e.g. "Index Scan using orders_customer_idx on orders" or "SEARCH o USING INDEX ...". */
  label: string;
  /** Cost, rows, conditions: one line each. */
  details: string[];
  /** The index the step uses, when it uses one. */
  index?: string;
  children: PlanTreeNode[];
}

type Json = Record<string, unknown>;

const DETAIL_KEYS = ['Index Cond', 'Recheck Cond', 'Hash Cond', 'Merge Cond', 'Join Filter', 'Filter', 'Sort Key', 'Group Key'] as const;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function postgresNode(node: Json, depth = 0): PlanTreeNode {
  if (depth > 200) return { label: '…', details: [], children: [] };
  let label = String(node['Node Type'] ?? 'Node');
  if (typeof node['Join Type'] === 'string' && node['Join Type'] !== 'Inner' && /Join|Nested Loop/.test(label)) label += ` (${node['Join Type']})`;
  const index = typeof node['Index Name'] === 'string' ? node['Index Name'] : undefined;
  if (index) label += ` using ${index}`;
  if (typeof node['Relation Name'] === 'string') label += ` on ${node['Relation Name']}${typeof node.Alias === 'string' && node.Alias !== node['Relation Name'] ? ` ${node.Alias}` : ''}`;
  const details: string[] = [];
  if (typeof node['Total Cost'] === 'number') details.push(`cost ${Number(node['Startup Cost'] ?? 0).toFixed(2)}..${node['Total Cost'].toFixed(2)}, ${String(node['Plan Rows'] ?? '?')} rows`);
  if (typeof node['Actual Total Time'] === 'number') details.push(`actual ${node['Actual Total Time'].toFixed(3)} ms, ${String(node['Actual Rows'] ?? '?')} rows × ${String(node['Actual Loops'] ?? 1)}`);
  for (const key of DETAIL_KEYS) {
    const value = node[key];
    if (value !== undefined && value !== null) details.push(`${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  const children = Array.isArray(node.Plans) ? node.Plans.filter(isRecord).map((child) => postgresNode(child, depth + 1)) : [];
  return { label, details, ...(index ? { index } : {}), children };
}

/** PostgreSQL: [{ Plan: {...} }, ...], as EXPLAIN (FORMAT JSON) gives it. */
function fromPostgres(value: unknown): PlanTreeNode[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || !value.every((entry) => isRecord(entry) && isRecord(entry.Plan))) return undefined;
  return (value as { Plan: Json }[]).map((entry) => postgresNode(entry.Plan));
}

/** SQLite: rows of (id, parent, detail), children under their parent in order. */
function fromSqlite(steps: { id: number; parent: number; detail: string; index?: string | null }[]): PlanTreeNode[] {
  const nodes = new Map<number, PlanTreeNode>();
  const roots: PlanTreeNode[] = [];
  for (const step of steps) {
    const index = step.index ?? /USING (?:COVERING )?INDEX (\S+)/.exec(step.detail)?.[1];
    const node: PlanTreeNode = { label: step.detail, details: [], ...(index ? { index } : {}), children: [] };
    nodes.set(step.id, node);
    const parent = step.parent === step.id ? undefined : nodes.get(step.parent);
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

const isStep = (row: unknown): row is { id: number; parent: number; detail: string } =>
  isRecord(row) && typeof row.id === 'number' && typeof row.parent === 'number' && typeof row.detail === 'string';

/** The plan a tool result carries, as a tree; undefined when the result is not a plan. */
export function planOf(structured: unknown): PlanTreeNode[] | undefined {
  if (!isRecord(structured)) return undefined;
  // explain_query (PostgreSQL): { plan: [{ Plan }] }; (SQLite): { plan: [{ id, parent, detail, ... }] }.
  if (Array.isArray(structured.plan)) {
    const pg = fromPostgres(structured.plan);
    if (pg) return pg;
    if (structured.plan.length > 0 && structured.plan.every(isStep)) return fromSqlite(structured.plan);
    return undefined;
  }
  // A query's rows: EXPLAIN (FORMAT JSON) is one json cell; EXPLAIN QUERY PLAN is rows of id, parent, notused, detail.
  const { columns, rows } = structured;
  if (!Array.isArray(columns) || !Array.isArray(rows) || rows.length === 0) return undefined;
  const names = columns.map((c) => (typeof c === 'string' ? c : isRecord(c) ? String(c.name) : ''));
  if (names.length === 1 && names[0] === 'QUERY PLAN' && rows.length === 1 && Array.isArray(rows[0])) {
    const cell = (rows[0] as unknown[])[0];
    const parsed = typeof cell === 'string' && cell.trimStart().startsWith('[') ? safeParse(cell) : cell;
    return fromPostgres(parsed);
  }
  const [id, parent, detail] = ['id', 'parent', 'detail'].map((n) => names.indexOf(n));
  if (id! >= 0 && parent! >= 0 && detail! >= 0 && names.length === 4 && names.includes('notused')) {
    const steps = rows.map((row) => (Array.isArray(row) ? { id: row[id!], parent: row[parent!], detail: row[detail!] } : undefined));
    if (steps.every(isStep)) return fromSqlite(steps);
  }
  return undefined;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
