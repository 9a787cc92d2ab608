import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import { describeTable, listTables, type TableDescription } from '../catalog.js';
import type { SqliteConfig } from '../config.js';

const TABLE_DESCRIPTION = z.object({
  name: z.string(),
  type: z.enum(['table', 'view']),
  columns: z.array(
    z.object({ name: z.string(), type: z.string(), notNull: z.boolean(), default: z.string().nullable(), primaryKey: z.number().int(), hidden: z.boolean() }),
  ),
  indexes: z.array(z.object({ name: z.string(), unique: z.boolean(), origin: z.string(), partial: z.boolean(), columns: z.array(z.string().nullable()) })),
  foreignKeys: z.array(
    z.object({ columns: z.array(z.string()), table: z.string(), references: z.array(z.string().nullable()), onUpdate: z.string(), onDelete: z.string() }),
  ),
  sql: z.string().nullable(),
});

/** describe_table's text: the columns first (what the model needs to write a query), then keys and the DDL. */
export function describeText(t: TableDescription): string {
  const lines = [`${t.type === 'view' ? 'View' : 'Table'} ${t.name}`, '', 'Columns:'];
  for (const c of t.columns) {
    const notes = [
      c.type || 'ANY',
      c.primaryKey > 0 ? `PRIMARY KEY${t.columns.filter((x) => x.primaryKey > 0).length > 1 ? ` (${c.primaryKey})` : ''}` : '',
      c.notNull ? 'NOT NULL' : '',
      c.default !== null ? `DEFAULT ${c.default}` : '',
      c.hidden ? 'generated/hidden' : '',
    ].filter(Boolean);
    lines.push(`  ${c.name}: ${notes.join(', ')}`);
  }
  if (t.indexes.length > 0) {
    lines.push('', 'Indexes:');
    for (const ix of t.indexes) lines.push(`  ${ix.name}${ix.unique ? ' (unique)' : ''}${ix.partial ? ' (partial)' : ''}: ${ix.columns.map((c) => c ?? '<expression>').join(', ')}`);
  }
  if (t.foreignKeys.length > 0) {
    lines.push('', 'Foreign keys:');
    for (const fk of t.foreignKeys) {
      lines.push(`  (${fk.columns.join(', ')}) -> ${fk.table}(${fk.references.map((r) => r ?? '<primary key>').join(', ')}) ON UPDATE ${fk.onUpdate} ON DELETE ${fk.onDelete}`);
    }
  }
  if (t.sql) lines.push('', 'Definition:', t.sql);
  return lines.join('\n');
}

export function schemaTools(config: SqliteConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const db = config.database;

  tools.push(defineTool({
    name: 'list_tables',
    description: "Lists the database's tables and views (SQLite's internal sqlite_* tables are left out).",
    input: z.object({}),
    output: z.object({ tables: z.array(z.object({ name: z.string(), type: z.enum(['table', 'view']) })) }),
    annotations: { title: 'List tables', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      const tables = listTables(db);
      const text = tables.length === 0 ? 'The database has no tables or views.' : tables.map((t) => (t.type === 'view' ? `${t.name} (view)` : t.name)).join('\n');
      return { text, structured: { tables } };
    },
  }));

  tools.push(defineTool({
    name: 'describe_table',
    description: 'Describes one table or view: columns with types, NOT NULL, defaults and primary key; indexes; foreign keys; and its CREATE statement.',
    input: z.object({ table_name: z.string().min(1).max(1024).describe('Table or view name, as list_tables shows it') }),
    output: TABLE_DESCRIPTION,
    annotations: { title: 'Describe a table', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ table_name }) => {
      const description = describeTable(db, table_name);
      return { text: describeText(description), structured: description };
    },
  }));
  return tools;
}
