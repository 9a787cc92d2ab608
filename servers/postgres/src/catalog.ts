/**
 * Catalog queries shared by the introspection tools and the table resources. Every identifier
 * the user gives is bound as a parameter and compared with the catalog, never formatted into SQL.
 */
import { ToolError, type SchemaTable } from '@suite/shared';
import type { Transaction } from './database.js';

/** Schemas a user rarely means: hidden unless asked for. */
export const SYSTEM_SCHEMA_FILTER = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'`;

export interface SchemaInfo {
  name: string;
  owner: string;
  tables: number;
  comment: string | null;
}

export async function listSchemas(tx: Transaction, includeSystem: boolean): Promise<SchemaInfo[]> {
  return tx.rows<SchemaInfo>(
    `SELECT n.nspname AS name, pg_get_userbyid(n.nspowner) AS owner,
            (SELECT count(*)::int FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind IN ('r','p','v','m','f')) AS tables,
            obj_description(n.oid, 'pg_namespace') AS comment
       FROM pg_namespace n
      WHERE ($1::boolean OR (${SYSTEM_SCHEMA_FILTER}))
      ORDER BY n.nspname`,
    [includeSystem],
  );
}

export interface TableInfo {
  schema: string;
  name: string;
  kind: 'table' | 'partitioned table' | 'view' | 'materialized view' | 'foreign table';
  rowEstimate: number | null;
  totalBytes: number | null;
  comment: string | null;
}

const KIND_SQL = `CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'foreign table' END`;

export async function listTables(tx: Transaction, options: { schema?: string; includeSystem: boolean; limit: number; offset?: number }): Promise<TableInfo[]> {
  return tx.rows<TableInfo>(
    `SELECT n.nspname AS schema, c.relname AS name, ${KIND_SQL} AS kind,
            CASE WHEN c.relkind IN ('r','p','m') AND c.reltuples >= 0 THEN c.reltuples::bigint::float8 END AS "rowEstimate",
            CASE WHEN c.relkind IN ('r','p','m') THEN pg_total_relation_size(c.oid)::float8 END AS "totalBytes",
            obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r','p','v','m','f')
        AND ($1::text IS NULL OR n.nspname = $1)
        AND ($2::boolean OR $1::text IS NOT NULL OR (${SYSTEM_SCHEMA_FILTER}))
        AND NOT c.relispartition
      ORDER BY n.nspname, c.relname
      LIMIT $3 OFFSET $4`,
    [options.schema ?? null, options.includeSystem, options.limit, options.offset ?? 0],
  );
}

export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  identity: string | null;
  generated: string | null;
  comment: string | null;
}

export interface TableDescription {
  schema: string;
  name: string;
  kind: string;
  comment: string | null;
  rowEstimate: number | null;
  columns: ColumnInfo[];
  primaryKey: string[];
  foreignKeys: { name: string; columns: string[]; references: string; definition: string }[];
  indexes: { name: string; definition: string; unique: boolean; primary: boolean; valid: boolean }[];
  constraints: { name: string; type: string; definition: string }[];
  viewDefinition: string | null;
}

/** Finds a relation by schema and name; without a schema, the one visible on search_path, else the only match. */
export async function resolveTable(tx: Transaction, schema: string | undefined, table: string): Promise<{ oid: number; schema: string; name: string }> {
  const rows = await tx.rows<{ oid: number; schema: string; name: string; visible: boolean }>(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, pg_table_is_visible(c.oid) AS visible
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = $2 AND ($1::text IS NULL OR n.nspname = $1) AND c.relkind IN ('r','p','v','m','f')
      ORDER BY pg_table_is_visible(c.oid) DESC, n.nspname`,
    [schema ?? null, table],
  );
  if (rows.length === 0) {
    throw ToolError.notFound(
      `No table, view or materialized view named ${JSON.stringify(table)}${schema !== undefined ? ` in schema ${JSON.stringify(schema)}` : ''}. Use list_tables to see what exists (names are case-sensitive).`,
    );
  }
  const visible = rows.find((r) => r.visible);
  if (schema === undefined && !visible && rows.length > 1) {
    throw ToolError.invalidArgument(`${JSON.stringify(table)} exists in several schemas (${rows.map((r) => r.schema).join(', ')}); give the schema.`);
  }
  const chosen = visible ?? rows[0]!;
  return { oid: chosen.oid, schema: chosen.schema, name: chosen.name };
}

export async function describeTable(tx: Transaction, schema: string | undefined, table: string): Promise<TableDescription> {
  const rel = await resolveTable(tx, schema, table);
  const [head] = await tx.rows<{ kind: string; comment: string | null; rowEstimate: number | null; viewDefinition: string | null }>(
    `SELECT ${KIND_SQL} AS kind, obj_description(c.oid, 'pg_class') AS comment,
            CASE WHEN c.relkind IN ('r','p','m') AND c.reltuples >= 0 THEN c.reltuples::bigint::float8 END AS "rowEstimate",
            CASE WHEN c.relkind IN ('v','m') THEN pg_get_viewdef(c.oid, true) END AS "viewDefinition"
       FROM pg_class c WHERE c.oid = $1`,
    [rel.oid],
  );
  const columns = await tx.rows<ColumnInfo>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
            CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END AS default,
            CASE a.attidentity WHEN 'a' THEN 'GENERATED ALWAYS AS IDENTITY' WHEN 'd' THEN 'GENERATED BY DEFAULT AS IDENTITY' END AS identity,
            CASE WHEN a.attgenerated = 's' THEN pg_get_expr(d.adbin, d.adrelid) END AS generated,
            col_description(a.attrelid, a.attnum) AS comment
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [rel.oid],
  );
  const constraints = await tx.rows<{ name: string; type: string; definition: string; columns: string[]; references: string | null }>(
    `SELECT con.conname AS name,
            CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'f' THEN 'FOREIGN KEY' WHEN 'u' THEN 'UNIQUE' WHEN 'c' THEN 'CHECK' WHEN 'x' THEN 'EXCLUDE' ELSE con.contype::text END AS type,
            pg_get_constraintdef(con.oid, true) AS definition,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            CASE WHEN con.contype = 'f' THEN con.confrelid::regclass::text END AS references
       FROM pg_constraint con WHERE con.conrelid = $1
      ORDER BY con.contype, con.conname`,
    [rel.oid],
  );
  const indexes = await tx.rows<{ name: string; definition: string; unique: boolean; primary: boolean; valid: boolean }>(
    `SELECT ci.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisunique AS unique, i.indisprimary AS primary, i.indisvalid AS valid
       FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid
      WHERE i.indrelid = $1 ORDER BY ci.relname`,
    [rel.oid],
  );
  return {
    schema: rel.schema,
    name: rel.name,
    kind: head?.kind ?? 'table',
    comment: head?.comment ?? null,
    rowEstimate: head?.rowEstimate ?? null,
    columns,
    primaryKey: constraints.find((c) => c.type === 'PRIMARY KEY')?.columns ?? [],
    foreignKeys: constraints.filter((c) => c.type === 'FOREIGN KEY').map((c) => ({ name: c.name, columns: c.columns, references: c.references ?? '', definition: c.definition })),
    indexes,
    constraints: constraints.map((c) => ({ name: c.name, type: c.type, definition: c.definition })),
    viewDefinition: head?.viewDefinition ?? null,
  };
}

/** A compact, readable rendering of a table description. */
export function renderDescription(d: TableDescription): string {
  const lines = [`${d.kind} ${d.schema}.${d.name}${d.rowEstimate !== null ? ` (~${d.rowEstimate} rows)` : ''}`];
  if (d.comment) lines.push(`comment: ${d.comment}`);
  lines.push('', 'columns:');
  for (const c of d.columns) {
    const extras = [c.nullable ? 'null' : 'not null', c.default !== null ? `default ${c.default}` : '', c.identity ?? '', c.generated ? `generated always as (${c.generated}) stored` : ''].filter(Boolean);
    lines.push(`  ${c.name} ${c.type} ${extras.join(', ')}${d.primaryKey.includes(c.name) ? ' [PK]' : ''}${c.comment ? ` -- ${c.comment}` : ''}`);
  }
  if (d.primaryKey.length) lines.push('', `primary key: (${d.primaryKey.join(', ')})`);
  if (d.foreignKeys.length) lines.push('', 'foreign keys:', ...d.foreignKeys.map((f) => `  ${f.name}: ${f.definition}`));
  const others = d.constraints.filter((c) => c.type !== 'PRIMARY KEY' && c.type !== 'FOREIGN KEY');
  if (others.length) lines.push('', 'constraints:', ...others.map((c) => `  ${c.name}: ${c.definition}`));
  if (d.indexes.length) lines.push('', 'indexes:', ...d.indexes.map((i) => `  ${i.definition}${i.valid ? '' : ' (INVALID)'}`));
  if (d.viewDefinition) lines.push('', 'definition:', d.viewDefinition);
  return lines.join('\n');
}

/**
 * Tables for the schema view, as list_tables orders them from `offset` on (one more than `limit`
 * is read, so the caller knows whether more follow), or the one named: columns with type, NOT NULL
 * and primary key position, and foreign keys with the referenced table's schema and columns.
 * Three queries for the whole page, whatever its size.
 */
export async function schemaTables(tx: Transaction, options: { schema?: string; table?: string; offset: number; limit: number }): Promise<SchemaTable[]> {
  const relations =
    options.table !== undefined
      ? [await resolveTable(tx, options.schema, options.table)]
      : (
          await tx.rows<{ oid: number; schema: string; name: string }>(
            `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r','p','v','m','f') AND ($1::text IS NULL OR n.nspname = $1)
                AND ($1::text IS NOT NULL OR (${SYSTEM_SCHEMA_FILTER})) AND NOT c.relispartition
              ORDER BY n.nspname, c.relname
              LIMIT $2 OFFSET $3`,
            [options.schema ?? null, options.limit + 1, options.offset],
          )
        );
  const oids = relations.map((r) => r.oid);
  const kinds = await tx.rows<{ oid: number; kind: string }>(`SELECT c.oid::int AS oid, ${KIND_SQL} AS kind FROM pg_class c WHERE c.oid = ANY($1::oid[])`, [oids]);
  const columns = await tx.rows<{ oid: number; name: string; type: string; notNull: boolean; primaryKey: number }>(
    `SELECT a.attrelid::int AS oid, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
            coalesce(array_position(pk.conkey, a.attnum), 0)::int AS "primaryKey"
       FROM pg_attribute a LEFT JOIN pg_constraint pk ON pk.conrelid = a.attrelid AND pk.contype = 'p'
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  const keys = await tx.rows<{ oid: number; columns: string[]; schema: string; table: string; references: string[] }>(
    `SELECT con.conrelid::int AS oid,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            tn.nspname AS schema, tc.relname AS table,
            ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS references
       FROM pg_constraint con JOIN pg_class tc ON tc.oid = con.confrelid JOIN pg_namespace tn ON tn.oid = tc.relnamespace
      WHERE con.contype = 'f' AND con.conrelid = ANY($1::oid[])
      ORDER BY con.conrelid, con.conname`,
    [oids],
  );
  return relations.map((rel) => ({
    schema: rel.schema,
    name: rel.name,
    kind: kinds.find((k) => k.oid === rel.oid)?.kind ?? 'table',
    columns: columns.filter((c) => c.oid === rel.oid).map(({ name, type, notNull, primaryKey }) => ({ name, type, notNull, primaryKey })),
    foreignKeys: keys.filter((k) => k.oid === rel.oid).map(({ columns: from, schema, table, references }) => ({ columns: from, schema, table, references })),
  }));
}
