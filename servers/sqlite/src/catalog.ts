import { ToolError, type SchemaForeignKey, type SchemaTable } from '@suite/shared';
import type { SqliteDatabase } from './database.js';

export interface TableEntry {
  name: string;
  type: 'table' | 'view';
}

export interface ColumnInfo {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  /** 1-based position in the primary key, 0 when not part of it. */
  primaryKey: number;
  /** Generated or hidden columns (pragma_table_xinfo). */
  hidden: boolean;
}

export interface IndexInfo {
  name: string;
  unique: boolean;
  /** c = CREATE INDEX, u = UNIQUE constraint, pk = PRIMARY KEY. */
  origin: string;
  partial: boolean;
  columns: (string | null)[];
}

export interface ForeignKeyInfo {
  columns: string[];
  table: string;
  references: (string | null)[];
  onUpdate: string;
  onDelete: string;
}

export interface TableDescription {
  name: string;
  type: 'table' | 'view';
  columns: ColumnInfo[];
  indexes: IndexInfo[];
  foreignKeys: ForeignKeyInfo[];
  sql: string | null;
}

// Every name below reaches SQLite as a bound parameter of a pragma table-valued function,
// never as text inside the statement, so no table name can change what a statement does.

/** User tables and views, without SQLite's own sqlite_* objects. */
export function listTables(db: SqliteDatabase): TableEntry[] {
  return db.catalogQuery((c) =>
    c
      .prepare(
        "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name COLLATE NOCASE",
      )
      .all() as TableEntry[],
  );
}

/** The table's name as stored (SQLite names are case-insensitive), or undefined. */
export function findTable(db: SqliteDatabase, name: string): TableEntry | undefined {
  return db.catalogQuery(
    (c) =>
      c
        .prepare(
          "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        )
        .get(name) as TableEntry | undefined,
  );
}

export function requireTable(db: SqliteDatabase, name: string): TableEntry {
  const found = findTable(db, name);
  if (found) return found;
  const names = listTables(db).map((t) => t.name);
  const hint = names.length > 0 ? ` Tables: ${names.slice(0, 30).join(', ')}${names.length > 30 ? ', …' : ''}.` : ' The database has no tables.';
  throw ToolError.notFound(`No table or view named ${JSON.stringify(name)}.${hint}`);
}

export function describeTable(db: SqliteDatabase, name: string): TableDescription {
  const table = requireTable(db, name);
  return db.catalogQuery((c) => {
    const columns = (
      c.prepare('SELECT name, type, "notnull" AS not_null, dflt_value AS dflt, pk, hidden FROM pragma_table_xinfo(?)').all(table.name) as {
        name: string;
        type: string;
        not_null: number;
        dflt: string | null;
        pk: number;
        hidden: number;
      }[]
    ).map((col) => ({ name: col.name, type: col.type, notNull: col.not_null === 1, default: col.dflt, primaryKey: col.pk, hidden: col.hidden !== 0 }));
    const indexRows = c.prepare('SELECT name, "unique" AS isUnique, origin, partial FROM pragma_index_list(?) ORDER BY seq').all(table.name) as {
      name: string;
      isUnique: number;
      origin: string;
      partial: number;
    }[];
    const indexColumns = c.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno');
    const indexes = indexRows.map((ix) => ({
      name: ix.name,
      unique: ix.isUnique === 1,
      origin: ix.origin,
      partial: ix.partial === 1,
      columns: (indexColumns.all(ix.name) as { name: string | null }[]).map((r) => r.name),
    }));
    const fkRows = c.prepare('SELECT id, "table" AS target, "from" AS source, "to" AS dest, on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(
      table.name,
    ) as { id: number; target: string; source: string; dest: string | null; on_update: string; on_delete: string }[];
    const foreignKeys: ForeignKeyInfo[] = [];
    for (const fk of fkRows) {
      let entry = foreignKeys[fk.id];
      if (!entry) {
        entry = { columns: [], table: fk.target, references: [], onUpdate: fk.on_update, onDelete: fk.on_delete };
        foreignKeys[fk.id] = entry;
      }
      entry.columns.push(fk.source);
      entry.references.push(fk.dest);
    }
    const sql = (c.prepare('SELECT sql FROM sqlite_schema WHERE name = ? AND type = ?').get(table.name, table.type) as { sql: string | null } | undefined)?.sql ?? null;
    return { name: table.name, type: table.type, columns, indexes, foreignKeys: foreignKeys.filter(Boolean), sql };
  });
}

/** Every CREATE statement of the user's schema, as SQL text. */
export function schemaSql(db: SqliteDatabase): string {
  const rows = db.catalogQuery(
    (c) =>
      c
        .prepare(
          "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 WHEN 'index' THEN 2 ELSE 3 END, name",
        )
        .all() as { sql: string }[],
  );
  if (rows.length === 0) return '-- The database has no tables yet.\n';
  return rows.map((r) => `${r.sql};`).join('\n\n') + '\n';
}

/** Table names starting with the typed prefix (case-insensitive), for completion. */
export function completeTableName(db: SqliteDatabase, prefix: string): string[] {
  const lower = prefix.toLowerCase();
  return listTables(db)
    .map((t) => t.name)
    .filter((n) => n.toLowerCase().startsWith(lower));
}

/**
 * Tables and views for the schema view, from `offset` on (one more than `limit` is read, so the
 * caller knows whether more follow), or the one named: columns with type, NOT NULL and primary key
 * position, and foreign keys with the referenced columns spelled out (SQLite leaves them out of
 * pragma_foreign_key_list when a key references the primary key; they are then its columns).
 */
export function schemaTables(db: SqliteDatabase, options: { table?: string; offset: number; limit: number }): SchemaTable[] {
  const entries = options.table !== undefined ? [requireTable(db, options.table)] : listTables(db).slice(options.offset, options.offset + options.limit + 1);
  return db.catalogQuery((c) => {
    const columnsOf = c.prepare('SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_xinfo(?) WHERE hidden IN (0, 2, 3) ORDER BY cid');
    const keysOf = c.prepare('SELECT id, "table" AS target, "from" AS source, "to" AS dest FROM pragma_foreign_key_list(?) ORDER BY id, seq');
    const primaryKeyOf = c.prepare('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk');
    return entries.map((entry) => {
      const columns = (columnsOf.all(entry.name) as { name: string; type: string; not_null: number; pk: number }[]).map((col) => ({
        name: col.name,
        type: col.type,
        notNull: col.not_null === 1,
        primaryKey: col.pk,
      }));
      const foreignKeys: SchemaForeignKey[] = [];
      for (const fk of keysOf.all(entry.name) as { id: number; target: string; source: string; dest: string | null }[]) {
        const key = (foreignKeys[fk.id] ??= { columns: [], schema: null, table: fk.target, references: [] });
        key.columns.push(fk.source);
        key.references.push(fk.dest ?? '');
      }
      for (const key of foreignKeys) {
        if (key?.references.includes('')) {
          const primary = (primaryKeyOf.all(key.table) as { name: string }[]).map((r) => r.name);
          key.references = key.references.map((name, i) => name || (primary[i] ?? 'rowid'));
        }
      }
      return { schema: null, name: entry.name, kind: entry.type, columns, foreignKeys: foreignKeys.filter(Boolean) };
    });
  });
}
