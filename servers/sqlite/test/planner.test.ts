import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';
import Database from '../src/sqlite-addon.js';
import { BIN, makeDatabaseFile, openServer, type Harness } from './helpers.js';

/**
 * SQLite's planner through the protocol: explain_query's steps with their indexes, and
 * recommend_indexes, whose candidates are tried in a scratch in-memory copy, never in the file.
 */
const SETUP = `
CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT, region INTEGER);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, status INTEGER, created_at TEXT, total REAL);
CREATE INDEX orders_by_customer ON orders (customer_id);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000)
INSERT INTO customers SELECT x, 'c' || x || '@example.com', x % 20 FROM n;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000)
INSERT INTO orders SELECT x, 1 + x % 2000, x % 5, date('2024-01-01', '+' || (x % 365) || ' days'), x % 100 FROM n;
ANALYZE;
`;

let h: Harness;
let file: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ file, cleanup } = await makeDatabaseFile(SETUP, 'shop.db'));
  h = await openServer({ file });
}, 30_000);

afterAll(async () => {
  await h?.close();
  await cleanup?.();
});

type Step = { detail: string; operation: string; table: string | null; index: string | null; using: string | null };

describe('explain_query', () => {
  it('gives each step its table and index, and sums up indexes used and full scans', async () => {
    const r = await h.session.callTool('explain_query', { query: 'SELECT c.email, o.total FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.region = 3' });
    expect(r.isError, r.text).toBe(false);
    const steps = (r.structured as { plan: Step[] }).plan;
    expect(steps).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ operation: 'SCAN', table: 'c', index: null }),
        expect.objectContaining({ operation: 'SEARCH', table: 'o', index: 'orders_by_customer', using: 'customer_id=?' }),
      ]),
    );
    expect(r.text).toMatch(/^QUERY PLAN\n/);
    expect(r.text).toMatch(/indexes used: orders_by_customer on o/);
    expect(r.text).toMatch(/full table scans: c/);
  });
});

describe('recommend_indexes', () => {
  it('turns a full scan into an index search, tried in a scratch copy: the file is not touched', async () => {
    const before = readFileSync(file);
    const r = await h.session.callTool('recommend_indexes', { query: 'SELECT * FROM orders WHERE status = ? AND created_at > ? ORDER BY created_at', params: [1, '2024-06-01'] });
    expect(r.isError, r.text).toBe(false);
    const s = r.structured as { recommendations: { ddl: string; table: string; columns: string[] }[]; planBefore: Step[]; planAfter: Step[]; weightBefore: number; weightAfter: number };
    expect(s.planBefore.some((step) => step.operation === 'SCAN' && step.table === 'orders' && step.index === null)).toBe(true);
    expect(s.recommendations.length).toBeGreaterThanOrEqual(1);
    expect(s.recommendations[0]!.table).toBe('orders');
    expect(s.recommendations[0]!.columns).toEqual(expect.arrayContaining(['status']));
    const search = s.planAfter.find((step) => step.table === 'orders');
    expect(search?.operation).toBe('SEARCH');
    expect(search?.index).toMatch(/^orders_status/);
    expect(s.weightAfter).toBeLessThan(s.weightBefore);
    expect(r.text).toMatch(/none created/);
    // The database file is byte for byte what it was, and has no new index.
    expect(readFileSync(file).equals(before)).toBe(true);
    const check = new Database(file, { readonly: true });
    try {
      expect(check.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'orders'`).all()).toEqual([{ name: 'orders_by_customer' }]);
      // Built for real, the recommended index gives the plan the scratch copy showed.
      check.close();
      const writable = new Database(file);
      writable.exec(s.recommendations[0]!.ddl);
      const real = writable.prepare('EXPLAIN QUERY PLAN SELECT * FROM orders WHERE status = ? AND created_at > ? ORDER BY created_at').all(1, '2024-06-01') as { detail: string }[];
      expect(real.map((x) => x.detail)).toEqual(s.planAfter.map((x) => x.detail));
      writable.exec(`DROP INDEX ${s.recommendations[0]!.ddl.split(' ')[2]}`);
      writable.close();
    } finally {
      if (check.open) check.close();
    }
  });

  it('says when no index would help, and refuses a statement it cannot plan', async () => {
    const none = await h.session.callTool('recommend_indexes', { query: 'SELECT * FROM customers WHERE id = 5' });
    expect(none.isError, none.text).toBe(false);
    expect((none.structured as { recommendations: unknown[] }).recommendations).toEqual([]);
    expect(none.text).toMatch(/No index would remove a scan/);
    const bad = await h.session.callTool('recommend_indexes', { query: 'SELECT * FROM no_such_table' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/no such table/);
    const two = await h.session.callTool('recommend_indexes', { query: 'SELECT 1; DROP TABLE orders' });
    expect(two.isError).toBe(true);
  });

  it('works over stdio of the built bin', async () => {
    const spawned = await spawnServer(BIN, [file], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    try {
      const r = await spawned.callTool('recommend_indexes', { query: 'SELECT id FROM customers WHERE email = ?', params: ['c5@example.com'] });
      expect(r.isError, r.text).toBe(false);
      expect((r.structured as { recommendations: { columns: string[] }[] }).recommendations[0]!.columns).toEqual(['email']);
    } finally {
      await spawned.close();
    }
  });
});
