import { z } from 'zod';

/**
 * The schema view's data (the SQLite and PostgreSQL servers' app-only `schema_read_page`): tables
 * with their columns and foreign keys in one shape for both databases, so that one view in the app
 * kit draws either. The database's own words (type names, kinds) are kept as text.
 */

/** Tables a page may ask for; the byte budget cuts a page of wide tables sooner. */
export const SCHEMA_PAGE_TABLES = 200;

const COLUMN = z.object({
  name: z.string(),
  /** The declared type, as the database spells it ('' for an untyped SQLite column). */
  type: z.string(),
  notNull: z.boolean(),
  /** 1-based position in the primary key, 0 when not part of it. */
  primaryKey: z.number().int(),
});

const FOREIGN_KEY = z.object({
  /** The referencing columns of this table, in order. */
  columns: z.array(z.string()),
  /** The referenced table's schema (PostgreSQL), or null (SQLite). */
  schema: z.string().nullable(),
  table: z.string(),
  /** The referenced columns, paired with `columns`. */
  references: z.array(z.string()),
});

export const SCHEMA_TABLE = z.object({
  schema: z.string().nullable(),
  name: z.string(),
  /** table, view, materialized view, … */
  kind: z.string(),
  columns: z.array(COLUMN),
  foreignKeys: z.array(FOREIGN_KEY),
});

export type SchemaTable = z.output<typeof SCHEMA_TABLE>;
export type SchemaColumn = z.output<typeof COLUMN>;
export type SchemaForeignKey = z.output<typeof FOREIGN_KEY>;

export const SCHEMA_PAGE_OUTPUT = z.object({
  tables: z.array(SCHEMA_TABLE),
  /** Where the page started, in the server's order of tables. */
  offset: z.number().int(),
  /** More tables follow (from offset + tables.length). */
  truncated: z.boolean(),
});

export type SchemaPage = z.output<typeof SCHEMA_PAGE_OUTPUT>;

/** The paging arguments of `schema_read_page`, the same on both servers. */
export const SCHEMA_PAGE_ARGS = {
  offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).describe('Tables to skip.'),
  limit: z.number().int().min(1).max(SCHEMA_PAGE_TABLES).default(SCHEMA_PAGE_TABLES).describe(`Tables to return (at most ${SCHEMA_PAGE_TABLES}).`),
};

/**
 * A page of tables within a byte budget: tables are kept in order while their JSON fits `maxBytes`
 * (the first always, so a page makes progress); `more` says whether tables followed the last one
 * read. The app's next page starts where this one stopped.
 */
export function schemaPage(tables: SchemaTable[], options: { offset: number; more: boolean; maxBytes: number }): { page: SchemaPage; text: string } {
  const kept: SchemaTable[] = [];
  const utf8 = new TextEncoder();
  let bytes = 0;
  for (const table of tables) {
    bytes += utf8.encode(JSON.stringify(table)).length;
    if (kept.length > 0 && bytes > options.maxBytes) break;
    kept.push(table);
  }
  const truncated = kept.length < tables.length || options.more;
  const fks = kept.reduce((n, t) => n + t.foreignKeys.length, 0);
  const text = `${kept.length} table${kept.length === 1 ? '' : 's'} from table ${options.offset + 1}, ${fks} foreign key${fks === 1 ? '' : 's'}${truncated ? '; more follow' : ''}.`;
  return { page: { tables: kept, offset: options.offset, truncated }, text };
}


