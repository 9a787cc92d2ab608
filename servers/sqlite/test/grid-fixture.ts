import { SqliteDatabase } from '../src/database.js';
import { makeDatabaseFile } from './helpers.js';

/** Values a cell may hold that someone else wrote: markup, a closing script tag, an event handler. */
export const HOSTILE = [
  `<img src=x onerror="parent.postMessage('pwned-img','*')">`,
  `</script><script>parent.postMessage('pwned-script','*')</script>`,
  `<svg onload="alert('pwned-svg')"></svg>`,
  `{"html": "<iframe srcdoc=\\"<script>parent.parent.postMessage('pwned-frame','*')</script>\\">"}`,
];

/**
 * Orders: every kind of cell (NULL, integers, reals, 64-bit integers beyond 2^53, BLOBs, JSON,
 * long text with line breaks, hostile markup), and `n` rows of them.
 */
export function gridSql(n: number): string {
  return `
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total REAL, big INTEGER, note TEXT, meta TEXT, photo BLOB);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n})
INSERT INTO orders SELECT i, 1 + i % 2, round(i * 1.25, 2), CASE WHEN i % 50 = 0 THEN 9007199254740993 + i END,
  CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 'line one of a long note' || char(10) || printf('%.200c', 'x') ELSE 'order ' || i END,
  CASE WHEN i % 3 = 0 THEN json_object('items', i % 5, 'gift', json('true')) END,
  CASE WHEN i % 13 = 0 THEN randomblob(16 + i % 5) END
FROM c;
${HOSTILE.map((h, i) => `INSERT INTO orders (id, customer_id, note) VALUES (${n + 1 + i}, 1, '${h.replace(/'/g, "''")}');`).join('\n')}
`;
}

export async function gridDatabase(n: number): Promise<{ database: SqliteDatabase; close(): Promise<void> }> {
  const { file, cleanup } = await makeDatabaseFile(gridSql(n), 'orders.db');
  const database = await SqliteDatabase.open({ file, workers: 1 });
  return {
    database,
    async close() {
      await database.close();
      await cleanup();
    },
  };
}
