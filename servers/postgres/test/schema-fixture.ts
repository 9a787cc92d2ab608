import { HOSTILE_NAMES } from '@suite/test-kit/apps';
import type { SchemaTable } from '@suite/shared';
import type { PostgresConfig, PostgresLimits } from '../src/config.js';
import { createTestDatabase, makeConfig, type TestDatabase } from './helpers.js';

/** Double-quoted PostgreSQL identifier. */
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * A shop's schema over two schemas: a single-column key, a composite key, a key into another
 * schema, identity and serial columns, a view, and a table and columns with hostile names.
 */
export const SCHEMA_SQL = `
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text UNIQUE);
CREATE TABLE orders (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id), total numeric(12,2), note text);
CREATE TABLE order_items (order_id bigint NOT NULL REFERENCES orders(id), line integer NOT NULL, sku varchar(40) NOT NULL, qty integer DEFAULT 1, PRIMARY KEY (order_id, line));
CREATE SCHEMA audit;
CREATE TABLE audit.events (id serial PRIMARY KEY, order_id bigint REFERENCES public.orders(id), at timestamptz NOT NULL);
CREATE TABLE ${q(HOSTILE_NAMES.table)} (${q(HOSTILE_NAMES.column)} text NOT NULL, ${q(HOSTILE_NAMES.reference)} integer REFERENCES customers(id));
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
`;

const column = (name: string, type: string, notNull = false, primaryKey = 0): SchemaTable['columns'][number] => ({ name, type, notNull, primaryKey });

/** The same schema as the database has it, written out (in list_tables' order: schema, then name). */
export const SCHEMA_TABLES: SchemaTable[] = [
  {
    schema: 'audit',
    name: 'events',
    kind: 'table',
    columns: [column('id', 'integer', true, 1), column('order_id', 'bigint'), column('at', 'timestamp with time zone', true)],
    foreignKeys: [{ columns: ['order_id'], schema: 'public', table: 'orders', references: ['id'] }],
  },
  {
    schema: 'public',
    name: HOSTILE_NAMES.table,
    kind: 'table',
    columns: [column(HOSTILE_NAMES.column, 'text', true), column(HOSTILE_NAMES.reference, 'integer')],
    foreignKeys: [{ columns: [HOSTILE_NAMES.reference], schema: 'public', table: 'customers', references: ['id'] }],
  },
  { schema: 'public', name: 'big_orders', kind: 'view', columns: [column('id', 'bigint'), column('total', 'numeric(12,2)')], foreignKeys: [] },
  { schema: 'public', name: 'customers', kind: 'table', columns: [column('id', 'integer', true, 1), column('name', 'text', true), column('email', 'text')], foreignKeys: [] },
  {
    schema: 'public',
    name: 'order_items',
    kind: 'table',
    columns: [column('order_id', 'bigint', true, 1), column('line', 'integer', true, 2), column('sku', 'character varying(40)', true), column('qty', 'integer')],
    foreignKeys: [{ columns: ['order_id'], schema: 'public', table: 'orders', references: ['id'] }],
  },
  {
    schema: 'public',
    name: 'orders',
    kind: 'table',
    columns: [column('id', 'bigint', true, 1), column('customer_id', 'integer', true), column('total', 'numeric(12,2)'), column('note', 'text')],
    foreignKeys: [{ columns: ['customer_id'], schema: 'public', table: 'customers', references: ['id'] }],
  },
];

export async function schemaDatabase(options: { limits?: Partial<PostgresLimits>; allowWrite?: boolean } = {}): Promise<{ config: PostgresConfig; db: TestDatabase; close(): Promise<void> }> {
  const db = await createTestDatabase(SCHEMA_SQL);
  const made = makeConfig(options.allowWrite ? db.adminUrl : db.roleUrl, options);
  return {
    config: made.config,
    db,
    async close() {
      await made.close();
      await db.drop();
    },
  };
}
