/**
 * SQLite's planner, read and tried: EXPLAIN QUERY PLAN steps with the table and index each one
 * uses, and index advice worked out in a scratch in-memory database that holds a copy of the
 * schema and of sqlite_stat1, never in the user's file.
 */
import Database from './sqlite-addon.js';
import type BetterSqlite3 from 'better-sqlite3';
import { ToolError } from '@suite/shared';

export interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

export interface PlanStep extends PlanRow {
  /** SCAN (every row), SEARCH (by key), or what else the step does (USE TEMP B-TREE, COMPOUND, ...). */
  operation: string;
  table: string | null;
  /** The index the step uses: a name, "INTEGER PRIMARY KEY", or "AUTOMATIC" (built for this query only). */
  index: string | null;
  /** The constraints the index serves, e.g. "customer_id=? AND created_at>?". */
  using: string | null;
}

const STEP = /^(SCAN|SEARCH)\s+(?:TABLE\s+)?("(?:[^"]|"")+"|\S+)(?:\s+AS\s+\S+)?(?:\s+USING\s+(?:(?:COVERING\s+)?INDEX\s+(\S+)|(INTEGER PRIMARY KEY)|(AUTOMATIC)\s+(?:PARTIAL\s+)?(?:COVERING\s+)?INDEX|PRIMARY KEY))?(?:\s+\((.*)\))?/;

export function describeSteps(plan: PlanRow[]): PlanStep[] {
  return plan.map((row) => {
    const match = STEP.exec(row.detail);
    if (!match) return { ...row, operation: row.detail.split(' ').slice(0, 3).join(' '), table: null, index: null, using: null };
    const table = match[2]!.startsWith('"') ? match[2]!.slice(1, -1).replace(/""/g, '"') : match[2]!;
    const index = match[3] ?? match[4] ?? match[5] ?? (/USING PRIMARY KEY/.test(row.detail) ? 'PRIMARY KEY' : null);
    return { ...row, operation: match[1]!, table, index, using: match[6] ?? null };
  });
}

/** EXPLAIN QUERY PLAN rows (id, parent) as an indented tree. */
export function planTree(plan: PlanRow[]): string {
  if (plan.length === 0) return '(no plan: the statement does not read any table)';
  const children = new Map<number, PlanRow[]>();
  for (const step of plan) children.set(step.parent, [...(children.get(step.parent) ?? []), step]);
  const lines: string[] = ['QUERY PLAN'];
  const walk = (parent: number, prefix: string, seen: Set<number>): void => {
    const kids = children.get(parent) ?? [];
    kids.forEach((step, i) => {
      const last = i === kids.length - 1;
      lines.push(`${prefix}${last ? '`--' : '|--'}${step.detail}`);
      if (!seen.has(step.id)) walk(step.id, `${prefix}${last ? '   ' : '|  '}`, new Set([...seen, step.id]));
    });
  };
  walk(0, '', new Set([0]));
  return lines.join('\n');
}

/** A line on what the plan reads: the indexes used, and the tables read row by row. */
export function planSummary(steps: PlanStep[]): string {
  const indexes = [...new Set(steps.filter((s) => s.index !== null).map((s) => `${s.index} on ${s.table}`))];
  const scans = [...new Set(steps.filter((s) => s.operation === 'SCAN' && s.index === null).map((s) => s.table!))];
  const sorts = steps.filter((s) => /^USE TEMP B-TREE/.test(s.detail)).length;
  return [
    `indexes used: ${indexes.length ? indexes.join(', ') : 'none'}`,
    `full table scans: ${scans.length ? scans.join(', ') : 'none'}`,
    ...(sorts ? [`temporary b-trees (sorting or grouping without an index): ${sorts}`] : []),
  ].join('\n');
}

/** Rows the planner assumes for a table: sqlite_stat1's count, or SQLite's default without statistics. */
type RowCounts = Map<string, number>;
const DEFAULT_ROWS = 1_000_000;

/**
 * SQLite reports no costs: a plan is scored by what it reads. A full scan reads every row, a
 * scan of an index about half as much, a search (a key lookup) a fraction that shrinks with each
 * constraint the index serves; a temporary b-tree (a sort) adds a share of the table.
 */
export function planWeight(steps: PlanStep[], rows: RowCounts): number {
  let weight = 0;
  let lastRows = 1;
  for (const step of steps) {
    const n = step.table ? (rows.get(step.table.toLowerCase()) ?? DEFAULT_ROWS) : lastRows;
    if (step.operation === 'SCAN') weight += step.index ? n / 2 : n;
    else if (step.operation === 'SEARCH') {
      const constraints = (step.using ?? '').split(/\s+AND\s+/).filter(Boolean);
      const equal = constraints.filter((c) => /=\?$|=\?\)?$/.test(c) && !/[<>]/.test(c)).length;
      const range = constraints.length - equal;
      weight += Math.max(1, n / 10 ** equal / 4 ** range) + (step.index === 'AUTOMATIC' ? n : 0);
    } else if (/^USE TEMP B-TREE/.test(step.detail)) weight += lastRows / 5;
    if (step.table) lastRows = n;
  }
  return weight;
}

export interface SqliteRecommendation {
  ddl: string;
  table: string;
  columns: string[];
}

export interface SqliteAdvice {
  recommendations: SqliteRecommendation[];
  planBefore: PlanStep[];
  planAfter: PlanStep[];
  weightBefore: number;
  weightAfter: number;
  candidatesTried: number;
  /** Schema objects the scratch copy could not hold (virtual tables without their module, say). */
  skipped: string[];
}

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string;
}

const MAX_SCHEMA_OBJECTS = 5_000;
const MAX_CANDIDATES = 40;

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Reads what the scratch copy needs from the user's database (through its read-only catalogue connection). */
export function readSchema(catalog: BetterSqlite3.Database): { schema: SchemaRow[]; stats: { tbl: string; idx: string | null; stat: string }[] } {
  const schema = catalog
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND type IN ('table', 'index', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
        ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid LIMIT ${MAX_SCHEMA_OBJECTS + 1}`,
    )
    .all() as SchemaRow[];
  if (schema.length > MAX_SCHEMA_OBJECTS) throw ToolError.invalidArgument(`The schema has more than ${MAX_SCHEMA_OBJECTS} tables, indexes and views: too many to copy for index advice.`);
  const hasStats = catalog.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'`).get() !== undefined;
  const stats = hasStats ? (catalog.prepare('SELECT tbl, idx, stat FROM sqlite_stat1 LIMIT 100000').all() as { tbl: string; idx: string | null; stat: string }[]) : [];
  return { schema, stats };
}

/**
 * Advises indexes for one statement. Candidates are the columns of each table the plan scans
 * (or sorts) that the statement names, alone and in pairs; each is created in the scratch copy,
 * the statement planned again, and the index dropped; a greedy search keeps the best while it helps.
 */
export function adviseSqliteIndexes(copy: ReturnType<typeof readSchema>, sql: string, params: unknown, maxIndexes: number): SqliteAdvice {
  const scratch = new Database(':memory:');
  try {
    scratch.pragma('trusted_schema = OFF');
    const skipped: string[] = [];
    for (const object of copy.schema) {
      try {
        scratch.exec(object.sql);
      } catch (error) {
        skipped.push(`${object.type} ${object.name} (${(error as Error).message})`);
      }
    }
    // ANALYZE on the empty copy makes sqlite_stat1; the user's statistics then go in, and
    // ANALYZE sqlite_schema has the planner load them.
    scratch.exec('ANALYZE');
    scratch.exec('DELETE FROM sqlite_stat1');
    const insert = scratch.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)');
    for (const row of copy.stats) insert.run(row.tbl, row.idx, row.stat);
    scratch.exec('ANALYZE sqlite_schema');
    const rows: RowCounts = new Map();
    for (const row of copy.stats) if (row.idx === null || !rows.has(row.tbl.toLowerCase())) rows.set(row.tbl.toLowerCase(), Number(row.stat.split(' ')[0]) || DEFAULT_ROWS);

    const plan = (): PlanStep[] => {
      let stmt: BetterSqlite3.Statement;
      try {
        stmt = scratch.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      } catch (error) {
        throw ToolError.invalidArgument(`The statement cannot be planned against the schema: ${(error as Error).message}`);
      }
      try {
        const value = (v: unknown): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v && typeof v === 'object' && '$blob' in v ? Buffer.from(String((v as { $blob: string }).$blob), 'base64') : v);
        const bindings =
          params === undefined || params === null
            ? []
            : Array.isArray(params)
              ? params.map(value)
              : [Object.fromEntries(Object.entries(params as Record<string, unknown>).map(([k, v]) => [k.replace(/^[:@$]/, ''), value(v)]))];
        return describeSteps((stmt.all(...bindings) as PlanRow[]).map((r) => ({ id: r.id, parent: r.parent, detail: r.detail })));
      } catch (error) {
        if (error instanceof RangeError) {
          throw ToolError.invalidArgument(`${error.message}: give params for the statement's placeholders (any values do: only the plan is computed).`);
        }
        throw error;
      }
    };

    const planBefore = plan();
    const weightBefore = planWeight(planBefore, rows);
    const words = new Set([...sql.matchAll(/"((?:[^"]|"")+)"|\[([^\]]+)\]|`([^`]+)`|([A-Za-z_][A-Za-z0-9_$]*)/g)].map((m) => (m[1]?.replace(/""/g, '"') ?? m[2] ?? m[3] ?? m[4]!).toLowerCase()));
    const tableNames = new Map(copy.schema.filter((o) => o.type === 'table').map((o) => [o.name.toLowerCase(), o.name]));
    const candidates: { table: string; columns: string[] }[] = [];
    const seen = new Set<string>();
    for (const step of planBefore) {
      // Steps that read more than they need: full scans, scans of an index, automatic indexes, and sorts.
      if (!step.table || !(step.operation === 'SCAN' || step.index === 'AUTOMATIC')) continue;
      const table = tableNames.get(step.table.toLowerCase());
      if (!table) continue;
      const columns = (scratch.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name).filter((c) => words.has(c.toLowerCase()));
      const lists = [...columns.map((c) => [c]), ...columns.flatMap((a, i) => columns.slice(i + 1).map((b) => [a, b]))];
      for (const list of lists) {
        const key = `${table}(${list.join(',')})`;
        if (seen.has(key) || candidates.length >= MAX_CANDIDATES) continue;
        seen.add(key);
        candidates.push({ table, columns: list });
      }
    }

    const chosen: SqliteRecommendation[] = [];
    let current = weightBefore;
    let tried = 0;
    while (chosen.length < maxIndexes) {
      let best: { candidate: (typeof candidates)[number]; weight: number } | undefined;
      for (const candidate of candidates) {
        if (chosen.some((c) => c.table === candidate.table && c.columns.join(',') === candidate.columns.join(','))) continue;
        const name = `advisor_candidate_${tried++}`;
        scratch.exec(`CREATE INDEX ${quote(name)} ON ${quote(candidate.table)} (${candidate.columns.map(quote).join(', ')})`);
        const steps = plan();
        scratch.exec(`DROP INDEX ${quote(name)}`);
        // An index only counts when the plan uses it.
        if (!steps.some((s) => s.index === name)) continue;
        const weight = planWeight(steps, rows);
        if (weight < current * 0.9 && (!best || weight < best.weight || (weight === best.weight && candidate.columns.length < best.candidate.columns.length))) best = { candidate, weight };
      }
      if (!best) break;
      const name = `${best.candidate.table}_${best.candidate.columns.join('_')}_idx`.replace(/[^A-Za-z0-9_]/g, '_');
      const ddl = `CREATE INDEX ${quote(name)} ON ${quote(best.candidate.table)} (${best.candidate.columns.map(quote).join(', ')})`;
      scratch.exec(ddl);
      chosen.push({ ddl, table: best.candidate.table, columns: best.candidate.columns });
      current = best.weight;
    }
    const planAfter = chosen.length ? plan() : planBefore;
    return { recommendations: chosen, planBefore, planAfter, weightBefore, weightAfter: planWeight(planAfter, rows), candidatesTried: tried, skipped };
  } finally {
    scratch.close();
  }
}
