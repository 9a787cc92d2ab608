import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';
import { BIN, makeDatabaseFile, openServer, type Harness } from './helpers.js';

// The official SQLite server names the statement `query` in read_query, write_query and
// create_table; its users' prompts and clients send that. `sql` (this server's earlier name) stays.
describe('the statement argument: query, with sql as an alias', () => {
  let harness: Harness;
  let cleanup: () => Promise<void>;
  let file: string;
  beforeAll(async () => {
    const db = await makeDatabaseFile();
    cleanup = db.cleanup;
    file = db.file;
    harness = await openServer({ file, allowWrite: true, workers: 1 });
  });
  afterAll(async () => {
    await harness?.close();
    await cleanup?.();
  });

  it('read_query takes query, or sql, or both when they are the same', async () => {
    for (const args of [{ query: 'SELECT name FROM people WHERE id = 1' }, { sql: 'SELECT name FROM people WHERE id = 1' }, { query: 'SELECT name FROM people WHERE id = 1', sql: 'SELECT name FROM people WHERE id = 1' }]) {
      const out = await harness.session.callTool('read_query', args);
      expect(out.isError, JSON.stringify(args)).toBe(false);
      expect(out.structured).toMatchObject({ columns: ['name'], rows: [['Ada']] });
    }
  });

  it('refuses a call with neither, or with both differing, saying what to send', async () => {
    for (const tool of ['read_query', 'write_query', 'create_table', 'explain_query']) {
      const none = await harness.session.callTool(tool, {});
      expect(none.isError, tool).toBe(true);
      expect(none.text).toBe(`Invalid arguments for ${tool}: query: required: give the SQL statement as query (sql is accepted as its older name)`);
      const both = await harness.session.callTool(tool, { query: 'SELECT 1', sql: 'SELECT 2' });
      expect(both.isError, tool).toBe(true);
      expect(both.text).toBe(`Invalid arguments for ${tool}: sql: query and sql were both given and differ; give the statement once, as query`);
    }
  });

  it('write_query and create_table take query as the official server does, and sql too', async () => {
    expect((await harness.session.callTool('create_table', { query: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)' })).isError).toBe(false);
    expect((await harness.session.callTool('create_table', { sql: 'CREATE TABLE more_notes (id INTEGER PRIMARY KEY)' })).isError).toBe(false);
    const inserted = await harness.session.callTool('write_query', { query: 'INSERT INTO notes (body) VALUES (?), (?)', params: ['a', 'b'] });
    expect(inserted.structured).toMatchObject({ changes: 2 });
    const updated = await harness.session.callTool('write_query', { sql: "UPDATE notes SET body = 'c' WHERE id = 1" });
    expect(updated.structured).toMatchObject({ changes: 1 });
    const read = await harness.session.callTool('read_query', { query: 'SELECT body FROM notes ORDER BY id' });
    expect(read.structured?.rows).toEqual([['c'], ['b']]);
    expect((await harness.session.callTool('explain_query', { query: 'SELECT * FROM notes WHERE id = 1' })).text).toContain('SEARCH notes');
  });

  it('over stdio of the built bin, a client written for the official server works unchanged', async () => {
    if (!existsSync(BIN)) throw new Error(`Build first: ${BIN} is missing.`);
    const session = await spawnServer(BIN, [file], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    try {
      const out = await session.callTool('read_query', { query: 'SELECT count(*) AS n FROM people' });
      expect(out.isError).toBe(false);
      expect(out.structured?.rows).toEqual([[3]]);
    } finally {
      await session.close();
    }
  });
});
