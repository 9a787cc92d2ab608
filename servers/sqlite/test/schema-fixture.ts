import { HOSTILE_NAMES } from '@suite/test-kit/apps';
import type { SchemaTable } from '@suite/shared';
import { SqliteDatabase, type SqliteLimits } from '../src/database.js';
import { makeDatabaseFile } from './helpers.js';

/** Double-quoted SQLite identifier. */
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * A shop's schema: a single-column key, a composite key, a key that references a primary key
 * without naming its column, a view, and a table and columns with hostile names.
 */
export const SCHEMA_SQL = `
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total REAL, note TEXT);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders, line INTEGER NOT NULL, sku VARCHAR(40) NOT NULL, qty INTEGER DEFAULT 1, PRIMARY KEY (order_id, line));
CREATE TABLE ${q(HOSTILE_NAMES.table)} (${q(HOSTILE_NAMES.column)} TEXT NOT NULL, ${q(HOSTILE_NAMES.reference)} INTEGER REFERENCES customers(id));
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
`;

/** The same schema as the database has it, written out (the order is list_tables': by name, case-insensitive). */
export const SCHEMA_TABLES: SchemaTable[] = [
  {
    schema: null,
    name: HOSTILE_NAMES.table,
    kind: 'table',
    columns: [
      { name: HOSTILE_NAMES.column, type: 'TEXT', notNull: true, primaryKey: 0 },
      { name: HOSTILE_NAMES.reference, type: 'INTEGER', notNull: false, primaryKey: 0 },
    ],
    foreignKeys: [{ columns: [HOSTILE_NAMES.reference], schema: null, table: 'customers', references: ['id'] }],
  },
  {
    schema: null,
    name: 'big_orders',
    kind: 'view',
    columns: [
      { name: 'id', type: 'INTEGER', notNull: false, primaryKey: 0 },
      { name: 'total', type: 'REAL', notNull: false, primaryKey: 0 },
    ],
    foreignKeys: [],
  },
  {
    schema: null,
    name: 'customers',
    kind: 'table',
    columns: [
      { name: 'id', type: 'INTEGER', notNull: false, primaryKey: 1 },
      { name: 'name', type: 'TEXT', notNull: true, primaryKey: 0 },
      { name: 'email', type: 'TEXT', notNull: false, primaryKey: 0 },
    ],
    foreignKeys: [],
  },
  {
    schema: null,
    name: 'order_items',
    kind: 'table',
    columns: [
      { name: 'order_id', type: 'INTEGER', notNull: true, primaryKey: 1 },
      { name: 'line', type: 'INTEGER', notNull: true, primaryKey: 2 },
      { name: 'sku', type: 'VARCHAR(40)', notNull: true, primaryKey: 0 },
      { name: 'qty', type: 'INTEGER', notNull: false, primaryKey: 0 },
    ],
    // REFERENCES orders: the referenced column is orders' primary key.
    foreignKeys: [{ columns: ['order_id'], schema: null, table: 'orders', references: ['id'] }],
  },
  {
    schema: null,
    name: 'orders',
    kind: 'table',
    columns: [
      { name: 'id', type: 'INTEGER', notNull: false, primaryKey: 1 },
      { name: 'customer_id', type: 'INTEGER', notNull: true, primaryKey: 0 },
      { name: 'total', type: 'REAL', notNull: false, primaryKey: 0 },
      { name: 'note', type: 'TEXT', notNull: false, primaryKey: 0 },
    ],
    foreignKeys: [{ columns: ['customer_id'], schema: null, table: 'customers', references: ['id'] }],
  },
];

export async function schemaDatabase(options: { limits?: Partial<SqliteLimits>; allowWrite?: boolean } = {}): Promise<{ database: SqliteDatabase; close(): Promise<void> }> {
  const { file, cleanup } = await makeDatabaseFile(SCHEMA_SQL, 'shop.db');
  const database = await SqliteDatabase.open({ file, workers: 1, ...options });
  return {
    database,
    async close() {
      await database.close();
      await cleanup();
    },
  };
}
