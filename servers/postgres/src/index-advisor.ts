/**
 * Index advice: candidate indexes from the columns the plans filter, join and sort on, each costed
 * by PostgreSQL's own planner with a hypothetical index (hypopg), and a greedy search that keeps
 * adding the candidate that lowers the workload's estimated cost most until nothing helps, the
 * size budget is spent or the index count is reached. Nothing is ever created: the hypothetical
 * indexes live in the call's connection, which is closed afterwards.
 */
import pg from 'pg';
import { ToolError } from '@suite/shared';
import type { Transaction } from './database.js';
import { isDatabaseError } from './errors.js';
import { createHypothetical, dropHypothetical, hypopgSchema, hypotheticalSize, parseIndexStatement, type HypotheticalIndex } from './hypothetical.js';

export interface WorkloadQuery {
  sql: string;
  params: readonly unknown[];
  /** How much the query counts: its calls for a recorded workload, 1 otherwise. */
  weight: number;
  /** The query is pg_stat_statements' normalized text: its $n have no values and are planned generically. */
  generic: boolean;
  source: 'argument' | 'pg_stat_statements';
}

export interface AdvisorOptions {
  maxIndexes: number;
  /** Total estimated size the recommended indexes may take; undefined: the size of the tables they are on. */
  budgetBytes: number | undefined;
  /** The share of a query's cost an index must save to count as helping it. */
  minImprovement: number;
}

export interface QueryReport {
  query: string;
  source: 'argument' | 'pg_stat_statements';
  weight: number;
  costBefore: number | null;
  costAfter: number | null;
  planBefore: string | null;
  planAfter: string | null;
  /** Why the query could not be planned (it is left out of the search). */
  error?: string;
}

export interface Recommendation {
  ddl: string;
  table: string;
  columns: string[];
  estimatedBytes: number;
  /** 1-based numbers of the queries whose best plan uses this index. */
  queriesHelped: number[];
  /** The weighted workload cost this index took off when the search chose it. */
  costSaved: number;
}

export interface AdvisorReport {
  queries: QueryReport[];
  recommendations: Recommendation[];
  budgetBytes: number;
  workloadCostBefore: number;
  workloadCostAfter: number;
  candidatesTried: number;
}

export type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

interface Relation {
  schema: string;
  table: string;
}

interface Candidate {
  key: string;
  relation: Relation;
  columns: string[];
  ddl: string;
  /** Queries that read the table (only their costs can change). */
  queries: Set<number>;
}

interface Planned {
  query: WorkloadQuery;
  /** A prepared statement for generic plans, with its parameter count. */
  prepared?: { name: string; params: number };
  cost: number;
  plan: PlanNode;
}

const NAME = String.raw`(?:[a-z_][a-z0-9_$]*|"(?:[^"]|"")+")`;
/** alias.column in VERBOSE plan expressions (which qualify every column). */
const COLUMN_REF = new RegExp(String.raw`(?<![\w$."])(${NAME})\.(${NAME})(?![\w$"(])`, 'gi');
const EXPRESSION_KEYS = ['Filter', 'Index Cond', 'Recheck Cond', 'Hash Cond', 'Merge Cond', 'Join Filter'] as const;
const MAX_KEY_COLUMNS = 4;

function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name;
}

function qualified(relation: Relation): string {
  return `${pg.escapeIdentifier(relation.schema)}.${pg.escapeIdentifier(relation.table)}`;
}

/** The plan's shape: node types with their relation and index, depth-first, e.g. "Gather > Parallel Seq Scan on big". */
export function planShape(node: PlanNode): string {
  const parts: string[] = [];
  const walk = (n: PlanNode, depth: number): void => {
    let title = String(n['Node Type'] ?? '?');
    if (typeof n['Index Name'] === 'string') title += ` using ${n['Index Name']}`;
    if (typeof n['Relation Name'] === 'string') title += ` on ${n['Relation Name']}`;
    parts.push(`${depth > 0 ? '> ' : ''}${title}`);
    for (const child of n.Plans ?? []) walk(child, depth + 1);
  };
  walk(node, 0);
  return parts.join(' ');
}

function walkPlan(node: PlanNode, visit: (n: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walkPlan(child, visit);
}

function usesIndex(node: PlanNode, indexName: string): boolean {
  let found = false;
  walkPlan(node, (n) => {
    if (n['Index Name'] === indexName) found = true;
  });
  return found;
}

/** What a plan asks of each table: columns compared for equality, by range, and sorted on. */
interface TableNeeds {
  relation: Relation;
  equality: string[];
  range: string[];
  sort: string[];
}

function collectNeeds(root: PlanNode): Map<string, TableNeeds> {
  const aliases = new Map<string, Relation>();
  walkPlan(root, (n) => {
    if (typeof n['Relation Name'] === 'string' && typeof n.Schema === 'string') {
      aliases.set(String(n.Alias ?? n['Relation Name']), { schema: n.Schema, table: n['Relation Name'] });
    }
  });
  const needs = new Map<string, TableNeeds>();
  const add = (alias: string, column: string, kind: 'equality' | 'range' | 'sort'): void => {
    const relation = aliases.get(alias);
    if (!relation) return;
    const key = `${relation.schema}.${relation.table}`;
    let entry = needs.get(key);
    if (!entry) needs.set(key, (entry = { relation, equality: [], range: [], sort: [] }));
    const list = entry[kind];
    if (!list.includes(column)) list.push(column);
  };
  walkPlan(root, (n) => {
    for (const key of EXPRESSION_KEYS) {
      const text = n[key];
      if (typeof text !== 'string') continue;
      // String constants can hold anything, dotted names included: blank them out first.
      const expression = text.replace(/'(?:[^']|'')*'/g, (m) => ' '.repeat(m.length));
      for (const match of expression.matchAll(COLUMN_REF)) {
        const after = expression.slice(match.index + match[0].length).replace(/^[)\s]*/, '');
        const before = expression.slice(0, match.index).replace(/[(\s]*$/, '');
        const kind = /^(=|IS NULL)/i.test(after) || /=$/.test(before) ? 'equality' : /^(<|>|~~)/.test(after) || /[<>]$/.test(before) ? 'range' : undefined;
        if (kind) add(unquote(match[1]!), unquote(match[2]!), kind);
      }
    }
    const sortKey = n['Sort Key'];
    if (Array.isArray(sortKey)) {
      for (const item of sortKey) {
        const match = new RegExp(`^(${NAME})\\.(${NAME})(\\s+DESC)?`, 'i').exec(String(item));
        if (match) add(unquote(match[1]!), unquote(match[2]!), 'sort');
      }
    }
  });
  return needs;
}

/** Candidate key lists for one table of one query, most specific first. */
function candidateColumns(needs: TableNeeds, columnsOf: Set<string>): string[][] {
  const keep = (list: string[]): string[] => list.filter((c) => columnsOf.has(c));
  const equality = keep(needs.equality);
  const range = keep(needs.range);
  const sort = keep(needs.sort);
  const lists: string[][] = [];
  const push = (list: string[]): void => {
    const unique = [...new Set(list)].slice(0, MAX_KEY_COLUMNS);
    if (unique.length > 0) lists.push(unique);
  };
  for (const column of [...equality, ...range, ...sort]) push([column]);
  if (equality.length > 1) push(equality);
  if (equality.length > 0 && range.length > 0) push([...equality, range[0]!]);
  if (equality.length > 0 && sort.length > 0) push([...equality, ...sort]);
  if (range.length > 0 && sort.length > 0 && range[0] !== sort[0]) push([range[0]!, ...sort]);
  return lists;
}

function indexName(relation: Relation, columns: string[]): string {
  const base = `${relation.table}_${columns.join('_')}_idx`.replace(/[^A-Za-z0-9_]/g, '_').toLowerCase();
  return base.length <= 63 ? base : base.slice(0, 63);
}

async function explainCost(tx: Transaction, planned: Planned): Promise<{ cost: number; plan: PlanNode }> {
  if (planned.prepared) {
    // A prepared statement keeps its generic plan, and a hypothetical index does not invalidate it: prepare afresh.
    await tx.rows(`DEALLOCATE ${planned.prepared.name}`);
    await tx.bounded(`PREPARE ${planned.prepared.name} AS ${planned.query.sql}`, []);
  }
  const sql = planned.prepared
    ? `EXPLAIN (FORMAT JSON, VERBOSE) EXECUTE ${planned.prepared.name}(${Array.from({ length: planned.prepared.params }, () => 'NULL').join(', ')})`
    : `EXPLAIN (FORMAT JSON, VERBOSE) ${planned.query.sql}`;
  const result = await tx.bounded(sql, planned.prepared ? [] : planned.query.params, { maxRows: 10, maxBytes: 8 * 1024 * 1024 });
  const cell = result.rows[0]?.[0];
  const plan = Array.isArray(cell) ? ((cell[0] as { Plan?: PlanNode } | undefined)?.Plan ?? undefined) : undefined;
  if (!plan) throw ToolError.invalidArgument('EXPLAIN returned no plan.');
  return { cost: Number(plan['Total Cost'] ?? 0), plan };
}

/** Plans one query for the baseline, inside a savepoint so a query that cannot be planned is only left out. */
async function planBaseline(tx: Transaction, query: WorkloadQuery, number: number): Promise<Planned | string> {
  await tx.rows('SAVEPOINT advisor_query');
  try {
    const planned: Planned = { query, cost: 0, plan: {} };
    if (query.generic) {
      const name = `advisor_q${number}`;
      // pg_stat_statements keeps $n without values: a generic plan is the one that does not depend on them.
      await tx.bounded(`PREPARE ${name} AS ${query.sql}`, []);
      const [row] = await tx.rows<{ params: number }>('SELECT coalesce(cardinality(parameter_types), 0)::int AS params FROM pg_prepared_statements WHERE name = $1', [name]);
      planned.prepared = { name, params: row?.params ?? 0 };
    }
    Object.assign(planned, await explainCost(tx, planned));
    await tx.rows('RELEASE SAVEPOINT advisor_query');
    return planned;
  } catch (error) {
    if (!isDatabaseError(error) && !(error instanceof ToolError)) throw error;
    await tx.rows('ROLLBACK TO SAVEPOINT advisor_query');
    return error instanceof Error ? error.message : String(error);
  }
}

export async function adviseIndexes(tx: Transaction, workload: WorkloadQuery[], options: AdvisorOptions): Promise<AdvisorReport> {
  const schema = await hypopgSchema(tx);
  tx.discardConnection();
  // Generic plans for pg_stat_statements' normalized texts (their $n have no values).
  await tx.rows("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)");
  const reports: QueryReport[] = [];
  const planned: (Planned | undefined)[] = [];
  for (const [i, query] of workload.entries()) {
    const outcome = await planBaseline(tx, query, i + 1);
    const base: QueryReport = { query: query.sql.replace(/\s+/g, ' ').trim().slice(0, 500), source: query.source, weight: query.weight, costBefore: null, costAfter: null, planBefore: null, planAfter: null };
    if (typeof outcome === 'string') {
      reports.push({ ...base, error: outcome });
      planned.push(undefined);
    } else {
      reports.push({ ...base, costBefore: outcome.cost, costAfter: outcome.cost, planBefore: planShape(outcome.plan), planAfter: planShape(outcome.plan) });
      planned.push(outcome);
    }
  }

  // Candidates from every plan, checked against the tables' real columns and existing indexes.
  const candidates = new Map<string, Candidate>();
  const tableInfo = new Map<string, { columns: Set<string>; existing: Set<string>; bytes: number } | null>();
  for (const [i, p] of planned.entries()) {
    if (!p) continue;
    for (const [key, needs] of collectNeeds(p.plan)) {
      if (!tableInfo.has(key)) {
        const [row] = await tx.rows<{ columns: string[] | null; existing: string[] | null; bytes: string | null; kind: string | null }>(
          `SELECT (SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped) AS columns,
                  (SELECT array_agg((SELECT string_agg(a.attname::text, ',' ORDER BY k.ord) FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                                      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum))
                     FROM pg_index i WHERE i.indrelid = c.oid AND i.indisvalid AND i.indexprs IS NULL AND i.indpred IS NULL) AS existing,
                  pg_table_size(c.oid)::text AS bytes, c.relkind::text AS kind
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
          [needs.relation.schema, needs.relation.table],
        );
        tableInfo.set(key, row?.columns && (row.kind === 'r' || row.kind === 'm') ? { columns: new Set(row.columns), existing: new Set(row.existing ?? []), bytes: Number(row.bytes ?? 0) } : null);
      }
      const info = tableInfo.get(key);
      if (!info) continue;
      for (const columns of candidateColumns(needs, info.columns)) {
        // An existing index with these leading columns already offers what this one would.
        if ([...info.existing].some((e) => `${e},`.startsWith(`${columns.join(',')},`))) continue;
        const candidateKey = `${key}(${columns.join(',')})`;
        let candidate = candidates.get(candidateKey);
        if (!candidate) {
          const ddl = `CREATE INDEX ${pg.escapeIdentifier(indexName(needs.relation, columns))} ON ${qualified(needs.relation)} (${columns.map((c) => pg.escapeIdentifier(c)).join(', ')})`;
          candidates.set(candidateKey, (candidate = { key: candidateKey, relation: needs.relation, columns, ddl, queries: new Set() }));
        }
        candidate.queries.add(i);
      }
    }
  }
  // Every query that reads a candidate's table may change cost with it, not only the one it came from.
  const readers = new Map<string, Set<number>>();
  for (const [i, p] of planned.entries()) {
    if (!p) continue;
    walkPlan(p.plan, (n) => {
      if (typeof n['Relation Name'] === 'string' && typeof n.Schema === 'string') {
        const key = `${n.Schema}.${n['Relation Name']}`;
        if (!readers.has(key)) readers.set(key, new Set());
        readers.get(key)!.add(i);
      }
    });
  }
  for (const candidate of candidates.values()) for (const q of readers.get(`${candidate.relation.schema}.${candidate.relation.table}`) ?? []) candidate.queries.add(q);

  const tablesBytes = [...tableInfo.values()].reduce((sum, info) => sum + (info?.bytes ?? 0), 0);
  const budgetBytes = options.budgetBytes ?? tablesBytes;
  const current = planned.map((p) => p?.cost ?? 0);
  const weighted = (costs: number[]): number => costs.reduce((sum, cost, i) => sum + cost * (workload[i]?.weight ?? 1), 0);
  const workloadCostBefore = weighted(current);
  const chosen: { candidate: Candidate; index: HypotheticalIndex; bytes: number; saved: number }[] = [];
  /** candidate key -> its evaluation against the current chosen set (dropped when a choice changes its queries' costs). */
  const evaluations = new Map<string, { saved: number; costs: Map<number, number>; bytes: number; helps: boolean }>();
  let spent = 0;
  let tried = 0;

  const evaluate = async (candidate: Candidate): Promise<{ saved: number; costs: Map<number, number>; bytes: number; helps: boolean }> => {
    const index = await createHypothetical(tx, schema, parseIndexStatement(candidate.ddl));
    try {
      tried++;
      const bytes = await hypotheticalSize(tx, schema, index);
      const costs = new Map<number, number>();
      let saved = 0;
      let helps = false;
      for (const q of candidate.queries) {
        const p = planned[q]!;
        const { cost } = await explainCost(tx, p);
        costs.set(q, cost);
        const before = current[q]!;
        if (cost < before) saved += (before - cost) * p.query.weight;
        if (before > 0 && (before - cost) / before >= options.minImprovement) helps = true;
      }
      return { saved, costs, bytes, helps };
    } finally {
      await dropHypothetical(tx, schema, index);
    }
  };

  while (chosen.length < options.maxIndexes) {
    let best: { candidate: Candidate; saved: number; costs: Map<number, number>; bytes: number } | undefined;
    for (const candidate of candidates.values()) {
      if (chosen.some((c) => c.candidate.key === candidate.key)) continue;
      let evaluation = evaluations.get(candidate.key);
      if (!evaluation) evaluations.set(candidate.key, (evaluation = await evaluate(candidate)));
      if (!evaluation.helps || spent + evaluation.bytes > budgetBytes) continue;
      // The most cost saved; between equals, the smaller index.
      if (!best || evaluation.saved > best.saved || (evaluation.saved === best.saved && evaluation.bytes < best.bytes)) best = { candidate, ...evaluation };
    }
    if (!best) break;
    const index = await createHypothetical(tx, schema, parseIndexStatement(best.candidate.ddl));
    chosen.push({ candidate: best.candidate, index, bytes: best.bytes, saved: best.saved });
    spent += best.bytes;
    for (const [q, cost] of best.costs) current[q] = Math.min(current[q]!, cost);
    // Candidates sharing a query with this one were measured against costs that just changed.
    for (const other of candidates.values()) if ([...other.queries].some((q) => best.candidate.queries.has(q))) evaluations.delete(other.key);
  }

  // The final plans, with every chosen index in place: what each query would run, and which index it uses.
  const recommendations: Recommendation[] = chosen.map(({ candidate, bytes, saved }) => ({
    ddl: candidate.ddl,
    table: `${candidate.relation.schema}.${candidate.relation.table}`,
    columns: candidate.columns,
    estimatedBytes: bytes,
    queriesHelped: [],
    costSaved: saved,
  }));
  for (const [i, p] of planned.entries()) {
    if (!p) continue;
    const { cost, plan } = chosen.length ? await explainCost(tx, p) : { cost: p.cost, plan: p.plan };
    const report = reports[i]!;
    report.costAfter = cost;
    report.planAfter = chosen.reduce((shape, c) => shape.split(c.index.name).join(`${indexName(c.candidate.relation, c.candidate.columns)} (hypothetical)`), planShape(plan));
    current[i] = cost;
    for (const [n, c] of chosen.entries()) if (usesIndex(plan, c.index.name)) recommendations[n]!.queriesHelped.push(i + 1);
  }
  return { queries: reports, recommendations, budgetBytes, workloadCostBefore, workloadCostAfter: weighted(current), candidatesTried: tried };
}
