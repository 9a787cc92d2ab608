import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { PARAM_VALUE, SQL_INPUT } from './query.js';
import { createHypothetical, hypopgSchema, hypotheticalSize, parseIndexStatement } from '../hypothetical.js';

/** Hypothetical indexes per explain call: enough to try a design, not a way to load the backend. */
const MAX_HYPOTHETICAL_INDEXES = 20;

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

/** Node details worth a line of their own, in the order EXPLAIN's text format prints them. */
const DETAIL_KEYS = [
  'Output',
  'Group Key',
  'Sort Key',
  'Sort Method',
  'Hash Cond',
  'Merge Cond',
  'Index Cond',
  'Recheck Cond',
  'Join Filter',
  'Filter',
  'Rows Removed by Filter',
  'Rows Removed by Join Filter',
  'Rows Removed by Index Recheck',
  'Heap Fetches',
  'Workers Planned',
  'Workers Launched',
] as const;

export function explainTools(config: PostgresConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const { database } = config;
  tools.push(defineTool({
    name: 'explain_query',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
    description: `Shows PostgreSQL's plan for ONE statement as a readable tree (from EXPLAIN (FORMAT JSON)), with costs and row estimates.
With analyze=true the statement really runs (timings, actual rows, buffers), inside a READ ONLY transaction that is
rolled back, so only read-only statements can be analyzed. Use it to see why a query is slow or which index it uses.
hypothetical_indexes (CREATE INDEX statements) shows the plan as if those indexes existed, through the hypopg extension:
they are simulated in this call's own session and gone when it ends; nothing is built or written.`,
    input: z.object({
      sql: SQL_INPUT.describe('The statement to explain (without EXPLAIN).'),
      params: z.array(PARAM_VALUE).max(65535).optional().describe('Values for $1, $2, ... in order.'),
      analyze: z.boolean().default(false).describe('Run the statement to measure actual times and rows (read-only, rolled back).'),
      hypothetical_indexes: z
        .array(z.string().min(1).max(4000))
        .max(MAX_HYPOTHETICAL_INDEXES)
        .optional()
        .describe('CREATE INDEX statements to plan with as if they existed, e.g. "CREATE INDEX ON orders (customer_id, created_at)" (needs the hypopg extension; not with analyze).'),
    }),
    output: z.object({
      analyzed: z.boolean(),
      plan: z.array(z.record(z.string(), z.unknown())),
      hypotheticalIndexes: z.array(z.object({ ddl: z.string(), name: z.string(), estimatedBytes: z.number() })).optional(),
    }),
    annotations: { title: 'Explain a query plan', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ sql, params, analyze, hypothetical_indexes }, ctx) => {
      const statements = (hypothetical_indexes ?? []).map(parseIndexStatement);
      if (analyze && statements.length > 0) {
        throw ToolError.invalidArgument('analyze=true runs the statement, and hypothetical indexes exist only for the planner: give one or the other.');
      }
      const text = `EXPLAIN (FORMAT JSON${analyze ? ', ANALYZE, BUFFERS' : ''}) ${sql}`;
      const { plan, hypothetical } = await database.readOnly(
        ctx.signal,
        async (tx) => {
          const hypothetical: { ddl: string; name: string; estimatedBytes: number }[] = [];
          if (statements.length > 0) {
            const schema = await hypopgSchema(tx);
            for (const statement of statements) {
              const index = await createHypothetical(tx, schema, statement);
              hypothetical.push({ ddl: statement.ddl, name: index.name, estimatedBytes: await hypotheticalSize(tx, schema, index) });
            }
          }
          const result = await tx.bounded(text, params ?? [], { maxRows: 10, maxBytes: 8 * 1024 * 1024 });
          const cell = result.rows[0]?.[0];
          if (!Array.isArray(cell)) throw ToolError.invalidArgument('EXPLAIN returned no plan; give one SELECT, INSERT, UPDATE, DELETE, VALUES or EXECUTE statement.');
          return { plan: cell as Record<string, unknown>[], hypothetical };
        },
        text,
      );
      if (statements.length === 0) return { text: renderPlan(plan), structured: { analyzed: analyze, plan } };
      const header = [
        'Planned as if these hypothetical indexes existed (hypopg; simulated for this call only, nothing was built):',
        ...hypothetical.map((h) => `  ${h.name}: ${h.ddl} (estimated size ${formatBytes(h.estimatedBytes)})`),
        '',
      ];
      return { text: [...header, renderPlan(plan)].join('\n'), structured: { analyzed: false, plan, hypotheticalIndexes: hypothetical } };
    },
  }));
  return tools;
}

export function renderPlan(plan: Record<string, unknown>[]): string {
  const lines: string[] = [];
  for (const entry of plan) {
    const root = entry.Plan as PlanNode | undefined;
    if (root) renderNode(root, 0, lines);
    for (const key of ['Planning Time', 'Execution Time'] as const) {
      if (typeof entry[key] === 'number') lines.push(`${key}: ${(entry[key] as number).toFixed(3)} ms`);
    }
  }
  return lines.join('\n');
}

function renderNode(node: PlanNode, depth: number, lines: string[]): void {
  // The layout of EXPLAIN's own text format: children under "->  ", six columns deeper per level.
  const pad = depth === 0 ? '' : `${' '.repeat(2 + 6 * (depth - 1))}->  `;
  const detailPad = ' '.repeat(2 + 6 * depth);
  let title = String(node['Node Type'] ?? 'Node');
  if (typeof node['Join Type'] === 'string' && /Join|Nested Loop/.test(title) && node['Join Type'] !== 'Inner') title = `${title} (${node['Join Type']})`;
  if (typeof node['Parent Relationship'] === 'string' && node['Parent Relationship'] === 'InitPlan') title = `InitPlan: ${title}`;
  if (typeof node['Index Name'] === 'string') title += ` using ${node['Index Name']}`;
  if (typeof node['Relation Name'] === 'string') {
    const relation = `${typeof node.Schema === 'string' ? `${node.Schema}.` : ''}${node['Relation Name']}`;
    title += ` on ${relation}${typeof node.Alias === 'string' && node.Alias !== node['Relation Name'] ? ` ${node.Alias}` : ''}`;
  } else if (typeof node['CTE Name'] === 'string') {
    title += ` on ${node['CTE Name']}`;
  } else if (typeof node['Function Name'] === 'string') {
    title += ` on ${node['Function Name']}`;
  }
  const estimate = `(cost=${num(node['Startup Cost'])}..${num(node['Total Cost'])} rows=${node['Plan Rows'] ?? '?'} width=${node['Plan Width'] ?? '?'})`;
  const actual =
    node['Actual Total Time'] !== undefined
      ? ` (actual time=${num(node['Actual Startup Time'], 3)}..${num(node['Actual Total Time'], 3)} rows=${node['Actual Rows']} loops=${node['Actual Loops']})`
      : node['Actual Loops'] === 0
        ? ' (never executed)'
        : '';
  lines.push(`${pad}${title}  ${estimate}${actual}`);
  for (const key of DETAIL_KEYS) {
    const value = node[key];
    if (value === undefined || value === null || (key.startsWith('Rows Removed') && value === 0)) continue;
    lines.push(`${detailPad}${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  const hit = node['Shared Hit Blocks'];
  const read = node['Shared Read Blocks'];
  if (typeof hit === 'number' && typeof read === 'number' && hit + read > 0) lines.push(`${detailPad}Buffers: shared hit=${hit} read=${read}`);
  for (const child of node.Plans ?? []) renderNode(child, depth + 1, lines);
}

function num(value: unknown, digits = 2): string {
  return typeof value === 'number' ? value.toFixed(digits) : '?';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}
