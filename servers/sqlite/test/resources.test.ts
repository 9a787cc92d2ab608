import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from '../src/sqlite-addon.js';
import { afterEach, describe, expect, it } from 'vitest';
import { protocolError } from '@suite/test-kit';
import { makeDatabaseFile, openServer, untilUpdated, type Harness } from './helpers.js';

const settle = (ms = 300): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('resources, subscriptions, prompts and completion', () => {
  const open: { h: Harness; cleanup: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.h.close();
      await o.cleanup();
    }
  });
  async function start(options: { allowWrite?: boolean; wal?: boolean } = {}): Promise<{ h: Harness; file: string; dir: string }> {
    const { dir, file, cleanup } = await makeDatabaseFile();
    if (options.wal) {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.close();
    }
    const h = await openServer({ file, allowWrite: options.allowWrite, workers: 1 });
    open.push({ h, cleanup });
    return { h, file, dir };
  }

  it('lists the schema, the tables and the insights memo', async () => {
    const { h } = await start();
    const { resources } = await h.session.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'memo://insights',
      'sqlite://sample/schema',
      'sqlite://sample/tables/people',
      'sqlite://sample/tables/team_sizes',
      'sqlite://sample/tables/teams',
    ]);
    const { resourceTemplates } = await h.session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['sqlite://sample/tables/{table}']);
  });

  it('reads the schema and one table', async () => {
    const { h } = await start();
    const { text, contents } = await h.session.readResource('sqlite://sample/schema');
    expect(contents).toHaveLength(1);
    expect(text).toContain('CREATE TABLE people');
    expect(text).toContain('CREATE INDEX people_by_team');
    const table = await h.session.readResource('sqlite://sample/tables/people');
    const parsed = JSON.parse(table.text) as { name: string; columns: { name: string }[] };
    expect(parsed.name).toBe('people');
    expect(parsed.columns.map((c) => c.name)).toEqual(['id', 'name', 'email', 'team_id', 'score']);
    expect(await protocolError(h.session.readResource("sqlite://sample/tables/nope'%3B%20DROP%20TABLE%20people"))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/No table or view named/),
      data: { kind: 'not_found' },
    });
  });

  it('completes table names for the template and the prompt', async () => {
    const { h } = await start();
    expect((await h.session.complete({ template: 'sqlite://sample/tables/{table}' }, 'table', 'te')).values).toEqual(['team_sizes', 'teams']);
    expect((await h.session.complete({ prompt: 'explore-database' }, 'table', 'P')).values).toEqual(['people']);
  });

  it('notifies schema subscribers when another process writes the file', async () => {
    const { h, file } = await start();
    await h.session.client.subscribeResource({ uri: 'sqlite://sample/schema' });
    await settle();
    await untilUpdated(h.session, 'sqlite://sample/schema', (attempt) => {
      const other = new Database(file);
      other.exec(`CREATE TABLE added_elsewhere_${attempt} (x)`);
      other.close();
    });
    expect((await h.session.readResource('sqlite://sample/schema')).text).toContain('added_elsewhere_0');
  });

  it('notifies table subscribers of a change that so far lives only in the WAL file', async () => {
    const { h, file } = await start({ wal: true });
    await h.session.client.subscribeResource({ uri: 'sqlite://sample/tables/people' });
    await settle();
    // The writer stays open, so no checkpoint copies the change into the main file.
    const other = new Database(file);
    try {
      other.pragma('wal_autocheckpoint = 0');
      await untilUpdated(h.session, 'sqlite://sample/tables/people', () => {
        other.prepare("INSERT INTO people (name) VALUES ('Barbara')").run();
      });
      const out = await h.session.callTool('read_query', { sql: "SELECT count(*) > 0 AS seen FROM people WHERE name = 'Barbara'" });
      expect(out.structured).toMatchObject({ rows: [[1]] });
    } finally {
      other.close();
    }
  });

  it('notifies table subscribers of WAL-only changes when the database switches to WAL after the subscription', async () => {
    const { h, file } = await start();
    await h.session.client.subscribeResource({ uri: 'sqlite://sample/tables/people' });
    await settle();
    const other = new Database(file);
    try {
      other.pragma('journal_mode = WAL');
      other.pragma('wal_autocheckpoint = 0');
      // Whatever the switch itself announced (it rewrites the main file header) is over by now.
      await settle(1000);
      await untilUpdated(h.session, 'sqlite://sample/tables/people', () => {
        other.prepare("INSERT INTO people (name) VALUES ('Barbara')").run();
      });
    } finally {
      other.close();
    }
  });

  it("notifies subscribers of this server's own writes", async () => {
    const { h } = await start({ allowWrite: true });
    await h.session.client.subscribeResource({ uri: 'sqlite://sample/tables/teams' });
    await settle();
    await untilUpdated(h.session, 'sqlite://sample/tables/teams', async () => {
      const out = await h.session.callTool('write_query', { sql: "INSERT INTO teams (name) VALUES ('infra')" });
      expect(out.isError).toBe(false);
    });
  });

  it('refuses to subscribe to a table that does not exist', async () => {
    const { h } = await start();
    expect(await protocolError(h.session.client.subscribeResource({ uri: 'sqlite://sample/tables/ghost' }))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/No table or view named/),
      data: { kind: 'not_found' },
    });
  });

  it('append_insight fills the memo and notifies its subscribers', async () => {
    const { h } = await start();
    await h.session.client.subscribeResource({ uri: 'memo://insights' });
    expect((await h.session.readResource('memo://insights')).text).toMatch(/No business insights/);
    const updated = h.session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'memo://insights', 5000);
    const out = await h.session.callTool('append_insight', { insight: 'Team core scores highest.' });
    expect(out.structured).toEqual({ count: 1 });
    await updated;
    expect((await h.session.readResource('memo://insights')).text).toContain('- Team core scores highest.');
  });

  it('mcp-demo takes a topic; explore-database embeds the schema resource', async () => {
    const { h } = await start();
    const { prompts } = await h.session.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['explore-database', 'mcp-demo']);
    expect(prompts.find((p) => p.name === 'mcp-demo')!.arguments).toEqual([expect.objectContaining({ name: 'topic', required: true })]);
    expect((await h.session.getPrompt('mcp-demo', { topic: 'bike rental' })).text).toContain('bike rental');
    expect(await protocolError(h.session.getPrompt('mcp-demo'))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid arguments for prompt mcp-demo: topic/) });
    const explore = await h.session.getPrompt('explore-database', { table: 'people' });
    expect(explore.messages[0]!.content.type).toBe('resource');
    expect(explore.resources).toHaveLength(1);
    expect(explore.resources[0]!.uri).toBe('sqlite://sample/schema');
    expect(explore.text).toContain('CREATE TABLE teams');
    expect(explore.text).toContain('team_id: INTEGER');
    expect(await protocolError(h.session.getPrompt('explore-database', { table: 'ghost' }))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/No table or view named/),
      data: { kind: 'not_found' },
    });
  });
});

describe('--demo', () => {
  it('serves the sample database and removes it at close', async () => {
    const h = await openServer({ demo: true, workers: 1 });
    const file = h.database.file;
    try {
      const list = await h.session.callTool('list_tables');
      expect((list.structured!.tables as { name: string }[]).map((t) => t.name)).toEqual(['customers', 'order_items', 'orders', 'products', 'revenue_by_category']);
      const revenue = await h.session.callTool('read_query', { sql: 'SELECT category, revenue FROM revenue_by_category ORDER BY revenue DESC LIMIT 1' });
      expect(revenue.structured!.rows).toEqual([['hardware', 481.5]]);
      const barcode = await h.session.callTool('read_query', { sql: 'SELECT barcode FROM products WHERE id = 1' });
      expect(barcode.structured!.rows).toEqual([['9007199254740993']]);
      const { resources } = await h.session.client.listResources();
      expect(resources.map((r) => r.uri)).toContain('sqlite://demo/schema');
    } finally {
      await h.close();
    }
    expect(existsSync(file)).toBe(false);
    expect(existsSync(path.dirname(file))).toBe(false);
  });
});
