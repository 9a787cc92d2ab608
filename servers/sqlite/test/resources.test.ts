import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
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
    const schema = await h.session.client.readResource({ uri: 'sqlite://sample/schema' });
    const text = (schema.contents[0] as { text: string }).text;
    expect(text).toContain('CREATE TABLE people');
    expect(text).toContain('CREATE INDEX people_by_team');
    const table = await h.session.client.readResource({ uri: 'sqlite://sample/tables/people' });
    const parsed = JSON.parse((table.contents[0] as { text: string }).text) as { name: string; columns: { name: string }[] };
    expect(parsed.name).toBe('people');
    expect(parsed.columns.map((c) => c.name)).toEqual(['id', 'name', 'email', 'team_id', 'score']);
    await expect(h.session.client.readResource({ uri: "sqlite://sample/tables/nope'%3B%20DROP%20TABLE%20people" })).rejects.toThrow(/No table or view named/);
  });

  it('completes table names for the template and the prompt', async () => {
    const { h } = await start();
    const template = await h.session.client.complete({ ref: { type: 'ref/resource', uri: 'sqlite://sample/tables/{table}' }, argument: { name: 'table', value: 'te' } });
    expect(template.completion.values).toEqual(['team_sizes', 'teams']);
    const prompt = await h.session.client.complete({ ref: { type: 'ref/prompt', name: 'explore-database' }, argument: { name: 'table', value: 'P' } });
    expect(prompt.completion.values).toEqual(['people']);
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
    const schema = await h.session.client.readResource({ uri: 'sqlite://sample/schema' });
    expect((schema.contents[0] as { text: string }).text).toContain('added_elsewhere_0');
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
    await expect(h.session.client.subscribeResource({ uri: 'sqlite://sample/tables/ghost' })).rejects.toThrow(/No table or view named/);
  });

  it('append_insight fills the memo and notifies its subscribers', async () => {
    const { h } = await start();
    await h.session.client.subscribeResource({ uri: 'memo://insights' });
    const empty = await h.session.client.readResource({ uri: 'memo://insights' });
    expect((empty.contents[0] as { text: string }).text).toMatch(/No business insights/);
    const updated = h.session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'memo://insights', 5000);
    const out = await h.session.callTool('append_insight', { insight: 'Team core scores highest.' });
    expect(out.structured).toEqual({ count: 1 });
    await updated;
    const memo = await h.session.client.readResource({ uri: 'memo://insights' });
    expect((memo.contents[0] as { text: string }).text).toContain('- Team core scores highest.');
  });

  it('mcp-demo takes a topic; explore-database embeds the schema resource', async () => {
    const { h } = await start();
    const { prompts } = await h.session.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['explore-database', 'mcp-demo']);
    expect(prompts.find((p) => p.name === 'mcp-demo')!.arguments).toEqual([expect.objectContaining({ name: 'topic', required: true })]);
    const demo = await h.session.client.getPrompt({ name: 'mcp-demo', arguments: { topic: 'bike rental' } });
    expect((demo.messages[0]!.content as { text: string }).text).toContain('bike rental');
    await expect(h.session.client.getPrompt({ name: 'mcp-demo', arguments: {} })).rejects.toThrow(/topic/);
    const explore = await h.session.client.getPrompt({ name: 'explore-database', arguments: { table: 'people' } });
    const embedded = explore.messages[0]!.content as { type: string; resource: { uri: string; text: string } };
    expect(embedded.type).toBe('resource');
    expect(embedded.resource.uri).toBe('sqlite://sample/schema');
    expect(embedded.resource.text).toContain('CREATE TABLE teams');
    expect(JSON.stringify(explore.messages)).toContain('team_id: INTEGER');
    await expect(h.session.client.getPrompt({ name: 'explore-database', arguments: { table: 'ghost' } })).rejects.toThrow(/No table or view named/);
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
