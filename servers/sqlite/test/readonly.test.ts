import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeDatabaseFile, openServer, snapshotTree, type Harness } from './helpers.js';

describe('read-only mode holds', () => {
  let dir: string;
  let file: string;
  let cleanup: () => Promise<void>;
  let h: Harness;
  let before: Record<string, string>;
  // A path outside the database directory that no test may create.
  const outside = path.join(os.tmpdir(), `sqlite-ro-escape-${process.pid}-${Date.now()}`);

  beforeAll(async () => {
    ({ dir, file, cleanup } = await makeDatabaseFile());
    h = await openServer({ file });
  });
  afterAll(async () => {
    await h.close();
    await cleanup();
  });
  beforeEach(async () => {
    before = await snapshotTree(dir);
  });
  afterEach(async () => {
    // The database file (bytes) and its directory (no journal, WAL, attached or vacuumed files) are unchanged.
    expect(await snapshotTree(dir)).toEqual(before);
    expect(existsSync(outside)).toBe(false);
  });

  async function refused(sql: string, pattern: RegExp = /.+/): Promise<string> {
    const out = await h.session.callTool('read_query', { sql });
    expect(out.isError, `expected ${sql} to be refused, got ${out.text}`).toBe(true);
    expect(out.text).toMatch(pattern);
    expect(out.text).not.toMatch(/\n\s+at /); // no stack trace
    // The same payload through recommend_indexes, which plans it in a scratch copy: answered or
    // refused, it changes nothing (the afterEach compares the directory byte for byte).
    const advised = await h.session.callTool('recommend_indexes', { sql });
    expect(advised.text).not.toMatch(/\n\s+at /);
    return out.text;
  }

  it('opens the file without creating anything and reads it', async () => {
    const out = await h.session.callTool('read_query', { sql: 'SELECT name FROM people ORDER BY id' });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ columns: ['name'], rows: [['Ada'], ['Grace'], ['Edsger']], rowCount: 3, truncated: false });
  });

  it('does not register write tools', async () => {
    const { tools } = await h.session.client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(['append_insight', 'describe_table', 'explain_query', 'list_tables', 'read_query', 'recommend_indexes']);
    for (const t of tools) expect(t.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it.each([
    ["INSERT INTO people (name) VALUES ('Mallory')"],
    ["UPDATE people SET name = 'x'"],
    ['DELETE FROM people'],
    ["INSERT INTO people (name) VALUES ('Mallory') RETURNING id"],
    ['DROP TABLE people'],
    ['CREATE TABLE evil (x)'],
    ['ALTER TABLE people ADD COLUMN evil TEXT'],
  ])('refuses %s', async (sql) => {
    await refused(sql, /read_query runs only a single statement that reads/);
  });

  it('refuses two statements in one string', async () => {
    await refused('SELECT 1; DELETE FROM people', /more than one statement/);
    await refused("SELECT 1; ATTACH DATABASE 'x.db' AS x", /more than one statement/);
  });

  it('a leading comment does not smuggle a write past the check', async () => {
    await refused('/* SELECT */ DELETE FROM people');
    await refused('-- SELECT 1\nINSERT INTO teams VALUES (3, \'x\')');
  });

  it('refuses a writable CTE', async () => {
    await refused("WITH x AS (SELECT 9 AS id, 'evil' AS name) INSERT INTO teams SELECT id, name FROM x");
  });

  it('refuses ATTACH DATABASE, whether it would create a file or read one', async () => {
    await refused(`ATTACH DATABASE '${path.join(dir, 'created.db')}' AS created`);
    await refused(`ATTACH DATABASE '${file}' AS again`);
    await refused(`ATTACH DATABASE '${outside}' AS outside`);
    await refused("ATTACH DATABASE ':memory:' AS mem");
  });

  it('refuses VACUUM INTO and VACUUM', async () => {
    await refused(`VACUUM INTO '${outside}'`);
    await refused(`VACUUM INTO '${path.join(dir, 'copy.db')}'`);
    await refused('VACUUM');
  });

  it('refuses PRAGMA query_only = OFF and journal_mode changes, and stays read-only afterwards', async () => {
    await refused('PRAGMA query_only = OFF');
    await refused('PRAGMA journal_mode = WAL');
    await refused('PRAGMA journal_mode = DELETE');
    await refused('PRAGMA user_version = 7');
    const check = await h.session.callTool('read_query', { sql: 'PRAGMA query_only' });
    expect(check.structured).toMatchObject({ rows: [[1]] });
    await refused("INSERT INTO teams VALUES (4, 'still no')");
  });

  it('refuses temporary tables and views', async () => {
    await refused('CREATE TEMP TABLE scratch (x)');
    await refused('CREATE TEMPORARY VIEW v AS SELECT 1');
    await refused('CREATE TEMP TABLE scratch AS SELECT * FROM people');
  });

  it('refuses load_extension', async () => {
    await refused(`SELECT load_extension('${path.join(dir, 'evil.so')}')`, /not authorized/);
  });

  it('refuses transaction control and maintenance statements', async () => {
    for (const sql of ['BEGIN IMMEDIATE', 'COMMIT', 'SAVEPOINT a', 'ANALYZE', 'REINDEX', 'PRAGMA wal_checkpoint(TRUNCATE)']) await refused(sql);
  });

  it('describe_table binds an injected name instead of running it', async () => {
    for (const name of ["people'); DROP TABLE people; --", 'people"; DELETE FROM people; --', "x' UNION SELECT sql FROM sqlite_schema --"]) {
      const out = await h.session.callTool('describe_table', { table_name: name });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/No table or view named/);
    }
    const still = await h.session.callTool('read_query', { sql: 'SELECT count(*) AS n FROM people' });
    expect(still.structured).toMatchObject({ rows: [[3]] });
  });

  it('explain_query does not run the statement it explains', async () => {
    const out = await h.session.callTool('explain_query', { sql: 'DELETE FROM people WHERE id > 0' });
    expect(out.isError).toBe(false);
    const count = await h.session.callTool('read_query', { sql: 'SELECT count(*) FROM people' });
    expect(count.structured).toMatchObject({ rows: [[3]] });
    const two = await h.session.callTool('explain_query', { sql: 'SELECT 1; DELETE FROM people' });
    expect(two.isError).toBe(true);
  });
});

describe('PRAGMA in read-only calls', () => {
  it('allows bare reads and refuses every assignment shape before SQLite compiles it', async () => {
    const { dir, file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, workers: 1 });
    const before = await snapshotTree(dir);
    try {
      for (const sql of ['PRAGMA user_version', 'PRAGMA main.user_version', '  pragma query_only ; ', "SELECT * FROM pragma_table_info('people')"]) {
        const out = await h.session.callTool('read_query', { sql });
        expect(out.isError, `${sql}: ${out.text}`).toBe(false);
      }
      for (const sql of [
        'PRAGMA query_only = OFF',
        'PRAGMA query_only(0)',
        'PRAGMA query_only /* x */ = OFF',
        'PRAGMA "query_only" = 0',
        'PRAGMA main.query_only=false',
        'EXPLAIN PRAGMA query_only = OFF',
        '-- c\nPRAGMA foreign_keys = OFF',
        'SELECT * FROM pragma_query_only(0)',
      ]) {
        const out = await h.session.callTool('read_query', { sql });
        expect(out.isError, sql).toBe(true);
        const explained = await h.session.callTool('explain_query', { sql });
        expect(explained.isError, sql).toBe(true);
      }
      // The table-valued forms take no value to set: SQLite reads an argument as a schema name.
      const tvf = await h.session.callTool('read_query', { sql: "SELECT * FROM pragma_journal_mode('wal')" });
      expect(tvf.isError).toBe(true);
      expect(tvf.text).toMatch(/unknown database/);
      const check = await h.session.callTool('read_query', { sql: 'PRAGMA query_only' });
      expect(check.structured).toMatchObject({ rows: [[1]] });
      expect(await snapshotTree(dir)).toEqual(before);
    } finally {
      await h.close();
      await cleanup();
    }
  });
});
