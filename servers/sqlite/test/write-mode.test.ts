import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from '../src/sqlite-addon.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../src/server.js';
import { makeDatabaseFile, openServer, snapshotTree, type Harness } from './helpers.js';

describe('write mode', () => {
  const open: { h: Harness; cleanup: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.h.close();
      await o.cleanup();
    }
  });
  async function start(flags: { allowAttach?: boolean; allowVacuumInto?: boolean } = {}): Promise<{ h: Harness; dir: string; file: string }> {
    const { dir, file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, allowWrite: true, workers: 1, ...flags });
    open.push({ h, cleanup });
    return { h, dir, file };
  }
  function count(file: string, table: string): number {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    } finally {
      db.close();
    }
  }

  it('registers write_query and create_table with truthful annotations', async () => {
    const { h } = await start();
    const { tools } = await h.session.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.write_query!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.create_table!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.read_query!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('inserts, updates and deletes with parameters, reporting changes', async () => {
    const { h, file } = await start();
    const insert = await h.session.callTool('write_query', { sql: 'INSERT INTO teams (name) VALUES (?)', params: ['ops'] });
    expect(insert.structured).toEqual({ changes: 1, lastInsertRowid: 3 });
    const returning = await h.session.callTool('write_query', { sql: 'UPDATE people SET score = score + 1 WHERE team_id = :t RETURNING id, score', params: { t: 1 } });
    expect(returning.structured).toMatchObject({ changes: 2, columns: ['id', 'score'], rows: [[1, 10.5], [2, 9]] });
    const del = await h.session.callTool('write_query', { sql: 'DELETE FROM people WHERE id = ?', params: [3] });
    expect(del.structured).toMatchObject({ changes: 1 });
    expect(count(file, 'people')).toBe(2);
    expect(count(file, 'teams')).toBe(3);
  });

  it('counts every change of a RETURNING statement whose rows are capped', async () => {
    const { h } = await start();
    const fill = await h.session.callTool('write_query', {
      sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 600) INSERT INTO teams (name) SELECT 'team ' || x FROM c",
    });
    expect(fill.structured).toMatchObject({ changes: 600 });
    const out = await h.session.callTool('write_query', { sql: "UPDATE teams SET name = name || '!' WHERE name LIKE 'team %' RETURNING id" });
    expect(out.structured).toMatchObject({ changes: 600, truncated: true });
    expect((out.structured!.rows as unknown[]).length).toBe(500);
  });

  it('keeps read_query read-only and sends SELECT away from write_query', async () => {
    const { h, file } = await start();
    const viaRead = await h.session.callTool('read_query', { sql: "INSERT INTO teams (name) VALUES ('x')" });
    expect(viaRead.isError).toBe(true);
    expect(viaRead.text).toMatch(/Use write_query/);
    const select = await h.session.callTool('write_query', { sql: 'SELECT * FROM people' });
    expect(select.isError).toBe(true);
    expect(select.text).toMatch(/use read_query/);
    expect(count(file, 'teams')).toBe(2);
  });

  it('refuses ATTACH, VACUUM INTO and load_extension unless allowed', async () => {
    const { h, dir } = await start();
    const before = await snapshotTree(dir);
    const attach = await h.session.callTool('write_query', { sql: `ATTACH DATABASE '${path.join(dir, 'other.db')}' AS other` });
    expect(attach.isError).toBe(true);
    expect(attach.text).toMatch(/--allow-attach/);
    const hidden = await h.session.callTool('write_query', { sql: `/* hi */ attach '${path.join(dir, 'other.db')}' as "other"` });
    expect(hidden.isError).toBe(true);
    const vacuum = await h.session.callTool('write_query', { sql: `VACUUM main INTO '${path.join(dir, 'copy.db')}'` });
    expect(vacuum.isError).toBe(true);
    expect(vacuum.text).toMatch(/--allow-vacuum-into/);
    const ext = await h.session.callTool('write_query', { sql: `SELECT load_extension('${path.join(dir, 'evil.so')}')` });
    expect(ext.isError).toBe(true);
    const extUpdate = await h.session.callTool('write_query', { sql: `UPDATE teams SET name = load_extension('${path.join(dir, 'evil.so')}')` });
    expect(extUpdate.isError).toBe(true);
    expect(extUpdate.text).toMatch(/not authorized/);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it('allows ATTACH and VACUUM INTO with their flags', async () => {
    const { h, dir } = await start({ allowAttach: true, allowVacuumInto: true });
    // The connection is opened without SQLITE_OPEN_CREATE, so ATTACH reaches existing databases only.
    const missing = await h.session.callTool('write_query', { sql: `ATTACH DATABASE '${path.join(dir, 'missing.db')}' AS missing` });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/unable to open database/);
    expect(existsSync(path.join(dir, 'missing.db'))).toBe(false);
    new Database(path.join(dir, 'other.db')).exec('CREATE TABLE archive (x); INSERT INTO archive VALUES (1), (2);');
    const attach = await h.session.callTool('write_query', { sql: `ATTACH DATABASE '${path.join(dir, 'other.db')}' AS other` });
    expect(attach.isError, attach.text).toBe(false);
    const copied = await h.session.callTool('write_query', { sql: 'INSERT INTO teams (name) SELECT x FROM other.archive' });
    expect(copied.structured).toMatchObject({ changes: 2 });
    const vacuum = await h.session.callTool('write_query', { sql: `VACUUM INTO '${path.join(dir, 'copy.db')}'` });
    expect(vacuum.isError).toBe(false);
    expect(count(path.join(dir, 'copy.db'), 'people')).toBe(3);
  });

  it('create_table creates tables only, and announces the new resource', async () => {
    const { h, file } = await start();
    const wrong = await h.session.callTool('create_table', { query: 'DROP TABLE people' });
    expect(wrong.isError).toBe(true);
    const listChanged = h.session.waitFor('notifications/resources/list_changed', () => true, 5000);
    const ok = await h.session.callTool('create_table', { query: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)' });
    expect(ok).toMatchObject({ isError: false, structured: { created: true } });
    await listChanged;
    const list = await h.session.callTool('list_tables');
    expect((list.structured!.tables as { name: string }[]).map((t) => t.name)).toContain('notes');
    expect(count(file, 'notes')).toBe(0);
  });

  it('a write stopped by its time limit leaves the database as it was', async () => {
    const { h, file } = await start();
    const out = await h.session.callTool('write_query', {
      sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) INSERT INTO teams (name) SELECT 'bulk' FROM c",
      timeoutSeconds: 1,
    });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/stopped after 1 s/);
    expect(count(file, 'teams')).toBe(2);
    const next = await h.session.callTool('write_query', { sql: "INSERT INTO teams (name) VALUES ('after')" });
    expect(next.structured).toMatchObject({ changes: 1 });
    expect(count(file, 'teams')).toBe(3);
  });
});

describe('opening', () => {
  it('never creates a database for a mistyped path', async () => {
    const { dir, cleanup } = await makeDatabaseFile();
    try {
      const missing = path.join(dir, 'typo.db');
      await expect(SqliteDatabase.open({ file: missing })).rejects.toThrow(/Database file not found/);
      await expect(SqliteDatabase.open({ file: missing, allowWrite: true })).rejects.toThrow(/Database file not found/);
      expect(existsSync(missing)).toBe(false);
    } finally {
      await cleanup();
    }
  });

  it('refuses a file that is not a database', async () => {
    const { dir, cleanup } = await makeDatabaseFile();
    try {
      const notDb = path.join(dir, 'notes.txt');
      await import('node:fs/promises').then((fs) => fs.writeFile(notDb, 'hello, this is not sqlite at all, just some text to fill a page'));
      await expect(SqliteDatabase.open({ file: notDb })).rejects.toThrow(/cannot be opened as a SQLite database/);
    } finally {
      await cleanup();
    }
  });
});
