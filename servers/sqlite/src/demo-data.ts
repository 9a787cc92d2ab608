import Database from './sqlite-addon.js';
import { mkdtempSync, rmSync, existsSync, accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The sample database behind --demo: a small shop with customers, products, orders and a view,
 * enough to try every tool. It lives in a private directory in shared memory (/dev/shm) when
 * the system has one, so query processes can open the same database, and it is removed at exit.
 */
export function createDemoDatabase(): { file: string; dispose: () => void } {
  const base = memoryBackedTempDir();
  const dir = mkdtempSync(path.join(base, 'mcp-sqlite-demo-'));
  const file = path.join(dir, 'demo.db');
  const db = new Database(file);
  try {
    db.exec(DEMO_SQL);
  } finally {
    db.close();
  }
  return { file, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

function memoryBackedTempDir(): string {
  const shm = '/dev/shm';
  try {
    if (existsSync(shm)) {
      accessSync(shm, constants.W_OK);
      return shm;
    }
  } catch {
    // Not writable: fall back to the ordinary temporary directory.
  }
  return os.tmpdir();
}

const DEMO_SQL = `
CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT UNIQUE,
  country TEXT NOT NULL DEFAULT 'NL',
  joined_at TEXT NOT NULL
);
CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
  barcode INTEGER,
  thumbnail BLOB
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  ordered_at TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'open'
);
CREATE TABLE order_items (
  order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (order_id, product_id)
);
CREATE INDEX orders_by_customer ON orders(customer_id, ordered_at);
CREATE VIEW revenue_by_category AS
  SELECT p.category, SUM(oi.quantity * p.price_cents) / 100.0 AS revenue
  FROM order_items oi JOIN products p ON p.id = oi.product_id
  GROUP BY p.category;

INSERT INTO customers (id, name, email, country, joined_at) VALUES
  (1, 'Ada Byron', 'ada@example.com', 'GB', '2024-01-15'),
  (2, 'Grace Hopper', 'grace@example.com', 'US', '2024-02-03'),
  (3, 'Edsger Dijkstra', 'edsger@example.com', 'NL', '2024-03-21'),
  (4, 'Barbara Liskov', 'barbara@example.com', 'US', '2024-05-09'),
  (5, 'Niklaus Wirth', 'niklaus@example.com', 'CH', '2024-06-30');
INSERT INTO products (id, name, category, price_cents, barcode, thumbnail) VALUES
  (1, 'Mechanical keyboard', 'hardware', 12900, 9007199254740993, X'89504E47'),
  (2, 'Trackball', 'hardware', 7450, 4006381333931, NULL),
  (3, 'The Art of Programming, vol. 1', 'books', 6900, 9780201896831, NULL),
  (4, 'Structured Programming', 'books', 3900, 9780122005503, NULL),
  (5, 'Code editor licence', 'software', 4900, NULL, NULL);
INSERT INTO orders (id, customer_id, ordered_at, status) VALUES
  (1, 1, '2024-07-01', 'shipped'), (2, 2, '2024-07-03', 'shipped'), (3, 3, '2024-07-04', 'open'),
  (4, 1, '2024-08-12', 'shipped'), (5, 4, '2024-08-15', 'cancelled'), (6, 5, '2024-09-01', 'open');
INSERT INTO order_items (order_id, product_id, quantity) VALUES
  (1, 1, 1), (1, 3, 1), (2, 2, 2), (3, 4, 1), (3, 5, 1), (4, 3, 1), (5, 1, 1), (6, 2, 1), (6, 4, 2);
`;
