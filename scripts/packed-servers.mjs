// The servers of the suite as the packed smoke test and the start-up benchmark drive them: for each,
// a fixture to point it at, its environment, a bad argument, one real call and a probe that works on
// any fixture; and the services they talk to (a PostgreSQL database and role made for the run, the
// fake GitHub of the tests). A server missing from this table fails the smoke test.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadFakeGithub } from '../servers/github/bench/load-fake.mjs';
import { createScratchDatabase } from './scratch-postgres.mjs';

export const TEXT = 'hello from the packed smoke test';

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export const textOf = (result) => (result.content ?? []).map((c) => (c.type === 'text' ? c.text : c.type === 'resource' ? (c.resource.text ?? '') : '')).join('\n');
function toolText(result, what) {
  assert(!result.isError, `${what} answered isError: ${textOf(result).slice(0, 500)}`);
  return textOf(result);
}

/**
 * `fixtures`: a directory for the fixtures; `installDir`: where the tarballs are installed (the
 * SQLite fixtures are made with its better-sqlite3).
 */
export function packedServers({ fixtures, installDir }) {
  /**
   * `fixture(i)` makes the i-th distinct path a config names (or the one a real call uses);
   * `probe` is a call that works on any fixture of the server, run for every README snippet.
   */
  const servers = {
    filesystem: {
      fixture: async (i) => {
        const dir = path.join(fixtures, `files-${i}`);
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, 'hello.txt'), `${TEXT}\n`);
        return dir;
      },
      realCall: async (client, dir) => {
        const text = toolText(await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'hello.txt') } }), 'read_text_file');
        assert(text.includes(TEXT), `read_text_file gave ${JSON.stringify(text.slice(0, 200))}`);
        // A content search runs in the search workers, a file of their own that the bin starts by path.
        const found = toolText(await client.callTool({ name: 'search_content', arguments: { path: dir, pattern: TEXT, literal: true } }), 'search_content');
        assert(found.includes('hello.txt:1:'), `search_content gave ${JSON.stringify(found.slice(0, 300))}`);
      },
      probe: async (client) => toolText(await client.callTool({ name: 'list_allowed_directories', arguments: {} }), 'list_allowed_directories'),
      badArgs: [['/nonexistent/suite-smoke-dir']],
    },
    sqlite: {
      fixture: async (i) => {
        const file = path.join(fixtures, `sqlite-${i}.db`);
        // Made by a child with the installed better-sqlite3 (12): loaded into this process, its finalizers
        // would abort Node 24.21 when the garbage collector runs them (the server itself loads 13 there).
        const script = "const Database = require('better-sqlite3'); const db = new Database(process.argv[1]); db.exec(\"CREATE TABLE fruit (name TEXT NOT NULL); INSERT INTO fruit VALUES ('apple'), ('banana');\"); db.close();";
        execFileSync(process.execPath, ['-e', script, file], { cwd: installDir, stdio: 'pipe' });
        return file;
      },
      // read_query runs in a query process, a file of its own that the bin starts by path.
      realCall: async (client) => {
        const text = toolText(await client.callTool({ name: 'read_query', arguments: { sql: 'SELECT name FROM fruit ORDER BY name' } }), 'read_query');
        assert(text.includes('apple') && text.includes('banana'), `read_query gave ${JSON.stringify(text.slice(0, 200))}`);
      },
      // Also right for --demo, whose tables differ.
      probe: async (client) => toolText(await client.callTool({ name: 'read_query', arguments: { sql: 'SELECT count(*) AS tables FROM sqlite_schema' } }), 'read_query'),
      badArgs: async () => {
        const garbage = path.join(fixtures, 'not-a-database.db');
        await writeFile(garbage, 'this is not a SQLite database\n');
        return [[garbage], [path.join(fixtures, 'missing.db')]];
      },
    },
    postgres: {
      fixture: async () => postgres.url,
      realCall: async (client) => {
        const text = toolText(await client.callTool({ name: 'query', arguments: { sql: 'SELECT name FROM fruit ORDER BY name' } }), 'query');
        assert(text.includes('apple') && text.includes('banana'), `query gave ${JSON.stringify(text.slice(0, 200))}`);
      },
      probe: async (client) => toolText(await client.callTool({ name: 'query', arguments: { sql: 'SELECT 1 AS one' } }), 'query'),
      badArgs: () => [['not-a-url'], [`postgresql://suite_smoke@127.0.0.1:1/nothing`]],
    },
    github: {
      fixture: async () => undefined,
      env: () => ({ GITHUB_API_URL: github.fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: github.token }),
      realCall: async (client) => {
        const text = toolText(await client.callTool({ name: 'get_issue', arguments: { owner: 'acme', repo: 'widgets', issue_number: 2 } }), 'get_issue');
        assert(text.length > 0, 'get_issue gave no text');
      },
      // Works whatever --repos a snippet gives.
      probe: async (client) => assert(toolText(await client.callTool({ name: 'get_me', arguments: {} }), 'get_me').includes('alice'), 'get_me is not alice'),
      badArgs: () => [['--api-url', 'http://example.com']],
    },
    logs: {
      fixture: async (i) => {
        const dir = path.join(fixtures, `logs-${i}`);
        await mkdir(dir, { recursive: true });
        const lines = ['2026-01-02T03:04:05Z INFO started', '2026-01-02T03:04:06Z WARN slow request', `2026-01-02T03:04:07Z ERROR ${TEXT}`];
        await writeFile(path.join(dir, 'app.log'), `${lines.join('\n')}\n`);
        return dir;
      },
      realCall: async (client, dir) => {
        const text = toolText(await client.callTool({ name: 'tail_log', arguments: { path: path.join(dir, 'app.log'), lines: 2 } }), 'tail_log');
        assert(text.includes(TEXT) && !text.includes('started'), `tail_log gave ${JSON.stringify(text.slice(0, 300))}`);
        // A search runs in the scan worker, a file of its own that the bin starts by path.
        const found = toolText(await client.callTool({ name: 'search_logs', arguments: { pattern: 'slow request', literal: true } }), 'search_logs');
        assert(found.includes('slow request'), `search_logs gave ${JSON.stringify(found.slice(0, 300))}`);
      },
      probe: async (client) => assert(toolText(await client.callTool({ name: 'list_logs', arguments: {} }), 'list_logs').includes('app.log'), 'list_logs has no app.log'),
      badArgs: () => [['/nonexistent/suite-smoke.log']],
    },
    'git-prompts': {
      fixture: async (i) => {
        const dir = path.join(fixtures, `repo-${i}`);
        await mkdir(dir, { recursive: true });
        const git = (...args) => execFileSync('git', ['-c', 'user.name=Smoke', '-c', 'user.email=smoke@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, stdio: 'pipe' });
        git('init', '-q');
        await writeFile(path.join(dir, 'cart.js'), 'export const total = (items) => items.length;\n');
        git('add', 'cart.js');
        git('commit', '-q', '-m', 'Add the cart');
        await writeFile(path.join(dir, 'cart.js'), 'export const total = (items) => items.reduce((sum, item) => sum + item.price, 0);\n');
        git('add', 'cart.js');
        return dir;
      },
      realCall: async (client) => {
        const prompt = await client.getPrompt({ name: 'git-commit', arguments: {} });
        const text = prompt.messages.map((m) => textOf({ content: [m.content] })).join('\n');
        assert(text.includes('cart.js') && text.includes('item.price'), `git-commit prompt lacks the staged diff: ${JSON.stringify(text.slice(0, 300))}`);
      },
      probe: async (client) => assert((await client.listPrompts()).prompts.some((p) => p.name === 'git-commit'), 'no git-commit prompt'),
      badArgs: () => [['/nonexistent/suite-smoke-repo']],
    },
  };

  // --- Services the servers talk to -------------------------------------------------------------

  const postgres = { url: '', cleanup: async () => undefined };
  async function startPostgres() {
    // A least-privilege role: read-only mode refuses a superuser.
    const db = await createScratchDatabase({ prefix: 'suite_smoke', setupSql: "CREATE TABLE fruit (name text NOT NULL); INSERT INTO fruit VALUES ('apple'), ('banana')" });
    postgres.url = db.roleUrl;
    postgres.cleanup = db.drop;
  }

  const github = { fake: undefined, token: '' };
  async function startGithub() {
    const { startFakeGithub, seed, TOKENS } = await loadFakeGithub();
    github.fake = await startFakeGithub();
    seed(github.fake);
    github.token = TOKENS.alice;
  }


  return {
    servers,
    postgres,
    github,
    async start() {
      await mkdir(fixtures, { recursive: true });
      await startPostgres();
      await startGithub();
    },
    async stop() {
      await github.fake?.close?.().catch(() => undefined);
      await postgres.cleanup();
    },
  };
}
