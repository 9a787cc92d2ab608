import { createTestDatabase, makeConfig, type TestDatabase } from './helpers.js';
import type { PostgresConfig } from '../src/config.js';

/** Values a cell may hold that someone else wrote: markup, a closing script tag, an event handler. */
export const HOSTILE = [
  `<img src=x onerror="parent.postMessage('pwned-img','*')">`,
  `</script><script>parent.postMessage('pwned-script','*')</script>`,
  `<svg onload="alert('pwned-svg')"></svg>`,
];

/** Orders of every PostgreSQL kind of value the grid shows: numeric, bigint, jsonb, bytea, boolean, arrays, timestamps, NULLs. */
export function gridSql(n: number): string {
  return `
CREATE TABLE orders (id integer PRIMARY KEY, total numeric(12,2), big bigint, paid boolean, tags text[], meta jsonb, photo bytea, at timestamptz, note text);
INSERT INTO orders SELECT i, i * 1.25, CASE WHEN i % 50 = 0 THEN 9007199254740993 + i END, i % 2 = 0,
  CASE WHEN i % 4 = 0 THEN ARRAY['a', 'b' || i] END,
  CASE WHEN i % 3 = 0 THEN jsonb_build_object('items', i % 5, 'gift', true) END,
  CASE WHEN i % 13 = 0 THEN decode(repeat('ab', 10 + i % 5), 'hex') END,
  timestamptz '2026-11-20 09:00:00+00' + i * interval '1 minute',
  CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 'line one of a long note' || chr(10) || repeat('x', 200) ELSE 'order ' || i END
FROM generate_series(1, ${n}) AS i;
${HOSTILE.map((h, i) => `INSERT INTO orders (id, note) VALUES (${n + 1 + i}, '${h.replace(/'/g, "''")}');`).join('\n')}
ANALYZE;
`;
}

export async function gridDatabase(n: number, maxRows = 1000): Promise<{ config: PostgresConfig; db: TestDatabase; close(): Promise<void> }> {
  const db = await createTestDatabase(gridSql(n));
  const made = makeConfig(db.roleUrl, { limits: { maxRows } });
  return {
    config: made.config,
    db,
    async close() {
      await made.close();
      await db.drop();
    },
  };
}
