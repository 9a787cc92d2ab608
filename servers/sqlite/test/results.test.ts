import Database from '../src/sqlite-addon.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDatabaseFile, openServer, type Harness } from './helpers.js';

const TYPES_SQL = `
CREATE TABLE numbers (id INTEGER PRIMARY KEY, n INTEGER, r REAL, t TEXT, b BLOB);
INSERT INTO numbers VALUES
  (1, 9007199254740993, 1.5, 'big', X'00FF10'),
  (2, -9223372036854775808, -0.25, 'min', NULL),
  (3, 9223372036854775807, 1e300, 'max', X''),
  (4, 42, NULL, NULL, NULL),
  (5, 9007199254740991, 0.1, 'edge', NULL);
CREATE TABLE many (id INTEGER PRIMARY KEY, label TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) INSERT INTO many SELECT x, 'row ' || x FROM c;
CREATE TABLE wide (id INTEGER PRIMARY KEY, payload TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400) INSERT INTO wide SELECT x, printf('%.10000c', 'x') FROM c;
INSERT INTO wide VALUES (1000, printf('%.100000c', 'y'));
`;

describe('bounded, typed results', () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const made = await makeDatabaseFile(TYPES_SQL);
    cleanup = made.cleanup;
    h = await openServer({ file: made.file });
  });
  afterAll(async () => {
    await h.close();
    await cleanup();
  });

  it('keeps 64-bit integers exact: strings beyond 2^53, numbers within', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT id, n, r, t FROM numbers ORDER BY id' });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({
      columns: ['id', 'n', 'r', 't'],
      rows: [
        [1, '9007199254740993', 1.5, 'big'],
        [2, '-9223372036854775808', -0.25, 'min'],
        [3, '9223372036854775807', 1e300, 'max'],
        [4, 42, null, null],
        [5, 9007199254740991, 0.1, 'edge'],
      ],
      rowCount: 5,
      truncated: false,
    });
    expect(out.text).toContain('9007199254740993');
    expect(out.text).toMatch(/5 rows\.$/);
  });

  it('returns BLOBs as base64 with a marker', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT b FROM numbers WHERE id IN (1, 3) ORDER BY id' });
    expect(out.structured!.rows).toEqual([[{ $blob: 'AP8Q' }], [{ $blob: '' }]]);
    expect(out.text).toContain('<blob 3 bytes>');
  });

  it('binds positional and named parameters, including big integers and BLOBs', async () => {
    const positional = await h.session.callTool('read_query', { sql: 'SELECT t FROM numbers WHERE id = ? OR r = ?', params: [4, 1.5] });
    expect(positional.structured!.rows).toEqual([['big'], [null]]);
    const named = await h.session.callTool('read_query', { sql: 'SELECT id FROM numbers WHERE t = :t', params: { t: 'max' } });
    expect(named.structured!.rows).toEqual([[3]]);
    const blob = await h.session.callTool('read_query', { sql: 'SELECT id FROM numbers WHERE b = ?', params: [{ $blob: 'AP8Q' }] });
    expect(blob.structured!.rows).toEqual([[1]]);
    const big = await h.session.callTool('read_query', { sql: 'SELECT id FROM numbers WHERE n = CAST(? AS INTEGER)', params: ['9007199254740993'] });
    expect(big.structured!.rows).toEqual([[1]]);
    const bool = await h.session.callTool('read_query', { sql: 'SELECT ? AS yes, ? AS no', params: [true, false] });
    expect(bool.structured!.rows).toEqual([[1, 0]]);
  });

  it('caps rows at the default and says so', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT * FROM many' });
    expect(out.structured).toMatchObject({ rowCount: 500, truncated: true });
    expect((out.structured!.rows as unknown[]).length).toBe(500);
    expect(out.text).toMatch(/500 rows shown; truncated: more rows exist/);
  });

  it('honours maxRows per call, and an exact fit is not truncated', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT id FROM many', maxRows: 10 });
    expect(out.structured).toMatchObject({ rowCount: 10, truncated: true });
    const exact = await h.session.callTool('read_query', { sql: 'SELECT id FROM many WHERE id <= 10', maxRows: 10 });
    expect(exact.structured).toMatchObject({ rowCount: 10, truncated: false });
    const big = await h.session.callTool('read_query', { sql: 'SELECT id FROM many', maxRows: 10_000 });
    expect(big.structured).toMatchObject({ rowCount: 10_000, truncated: true });
  });

  it('refuses maxRows above the hard limit', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT 1', maxRows: 10_001 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/maxRows/);
  });

  it('stops at the byte budget well below the message limit', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT * FROM wide WHERE id <= 400', maxRows: 10_000 });
    expect(out.isError).toBe(false);
    expect(out.structured!.truncated).toBe(true);
    expect(out.structured!.rowCount).toBeLessThan(400);
    expect(out.text).toMatch(/size limit/);
    const bytes = Buffer.byteLength(JSON.stringify(out.structured)) + Buffer.byteLength(out.text);
    expect(bytes).toBeLessThan(4 * 1024 * 1024);
  });

  it('cuts an over-long value and marks the answer truncated', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT payload FROM wide WHERE id = 1000' });
    expect(out.structured!.truncated).toBe(true);
    const cell = (out.structured!.rows as string[][])[0]![0]!;
    expect(cell).toMatch(/… \[\d+ more characters\]$/);
    expect(cell.length).toBeLessThan(100_000);
  });

  it('publishes an output schema', async () => {
    const { tools } = await h.session.client.listTools();
    const read = tools.find((t) => t.name === 'read_query')!;
    expect(read.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['columns', 'rows', 'rowCount', 'truncated']) });
  });

  it('reports SQL errors as actionable isError results', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT nope FROM numbers' });
    expect(out).toMatchObject({ isError: true });
    expect(out.text).toMatch(/no such column: nope/);
    const empty = await h.session.callTool('read_query', { sql: '   ' });
    expect(empty.isError).toBe(true);
    const wrongParams = await h.session.callTool('read_query', { sql: 'SELECT ?', params: [] });
    expect(wrongParams.isError).toBe(true);
    expect(wrongParams.text).toMatch(/parameter|bind/i);
  });

  it('lists tables and describes one fully', async () => {
    const list = await h.session.callTool('list_tables');
    expect(list.structured).toEqual({ tables: [{ name: 'many', type: 'table' }, { name: 'numbers', type: 'table' }, { name: 'wide', type: 'table' }] });
  });

  it('explains a query as a tree', async () => {
    const out = await h.session.callTool('explain_query', { sql: 'SELECT * FROM many WHERE id = 5' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^QUERY PLAN\n`--SEARCH many USING INTEGER PRIMARY KEY/);
  });
});

describe('describe_table', () => {
  it('gives columns, keys, indexes, foreign keys and the CREATE statement', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, workers: 1 });
    try {
      const out = await h.session.callTool('describe_table', { table_name: 'PEOPLE' });
      expect(out.isError).toBe(false);
      const d = out.structured as Record<string, unknown>;
      expect(d.name).toBe('people');
      expect(d.columns).toEqual([
        { name: 'id', type: 'INTEGER', notNull: false, default: null, primaryKey: 1, hidden: false },
        { name: 'name', type: 'TEXT', notNull: true, default: null, primaryKey: 0, hidden: false },
        { name: 'email', type: 'TEXT', notNull: false, default: null, primaryKey: 0, hidden: false },
        { name: 'team_id', type: 'INTEGER', notNull: false, default: null, primaryKey: 0, hidden: false },
        { name: 'score', type: 'REAL', notNull: false, default: '0', primaryKey: 0, hidden: false },
      ]);
      expect(d.indexes).toEqual(
        expect.arrayContaining([
          { name: 'people_by_team', unique: false, origin: 'c', partial: false, columns: ['team_id', 'name'] },
          expect.objectContaining({ unique: true, origin: 'u', columns: ['email'] }),
        ]),
      );
      expect(d.foreignKeys).toEqual([{ columns: ['team_id'], table: 'teams', references: ['id'], onUpdate: 'NO ACTION', onDelete: 'SET NULL' }]);
      expect(d.sql).toMatch(/^CREATE TABLE people/);
      expect(out.text).toContain('team_id: INTEGER');
      const view = await h.session.callTool('describe_table', { table_name: 'team_sizes' });
      expect(view.structured).toMatchObject({ type: 'view' });
      const internal = await h.session.callTool('describe_table', { table_name: 'sqlite_schema' });
      expect(internal.isError).toBe(true);
    } finally {
      await h.close();
      await cleanup();
    }
  });
});

describe('repeated queries (statements kept prepared in the query process)', () => {
  it('answers a repeated SELECT * with the columns of a schema changed by another connection', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, workers: 1 });
    try {
      const sql = 'SELECT * FROM teams ORDER BY id';
      const before = await h.session.callTool('read_query', { sql });
      expect(before.structured).toMatchObject({ columns: ['id', 'name'], rows: [[1, 'core'], [2, 'docs']] });
      const other = new Database(file);
      try {
        other.exec("ALTER TABLE teams ADD COLUMN city TEXT DEFAULT 'Berlin'; ALTER TABLE teams RENAME COLUMN name TO title;");
      } finally {
        other.close();
      }
      const after = await h.session.callTool('read_query', { sql });
      expect(after.structured).toMatchObject({ columns: ['id', 'title', 'city'], rows: [[1, 'core', 'Berlin'], [2, 'docs', 'Berlin']] });
      expect(after.text.split('\n')[0]).toMatch(/^id +\| title +\| city$/);
      // New parameters on the same text bind afresh.
      const byId = 'SELECT title FROM teams WHERE id = ?';
      expect((await h.session.callTool('read_query', { sql: byId, params: [1] })).structured!.rows).toEqual([['core']]);
      expect((await h.session.callTool('read_query', { sql: byId, params: [2] })).structured!.rows).toEqual([['docs']]);
      // A refused statement stays refused when repeated.
      for (let i = 0; i < 2; i++) {
        const refused = await h.session.callTool('read_query', { sql: "INSERT INTO teams (title) VALUES ('x')" });
        expect(refused.isError).toBe(true);
      }
    } finally {
      await h.close();
      await cleanup();
    }
  });
});

describe('messages to and from the query process', () => {
  it('carries long multi-byte text, line breaks and large requests intact in both directions', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, workers: 1 });
    try {
      // 3-byte and 4-byte characters, so that chunk boundaries of the pipe fall inside characters.
      const text = `${'€'.repeat(20_000)}\nline two\r\n\u2028${'😀'.repeat(5_000)}`;
      const echoed = await h.session.callTool('read_query', { sql: 'SELECT ? AS t, length(?) AS n', params: [text, text] });
      expect(echoed.isError).toBe(false);
      expect(echoed.structured!.rows).toEqual([[text, [...text].length]]);
      // A statement of several hundred kilobytes, multi-byte literal included, arrives whole.
      const literal = 'ü'.repeat(300_000);
      const big = await h.session.callTool('read_query', { sql: `SELECT length('${literal}') AS n -- ${'ß'.repeat(1000)}` });
      expect(big.structured!.rows).toEqual([[300_000]]);
      const after = await h.session.callTool('read_query', { sql: 'SELECT count(*) FROM people' });
      expect(after.structured!.rows).toEqual([[3]]);
    } finally {
      await h.close();
      await cleanup();
    }
  });
});
