// Sample configurations for the MCP Bundle scripts: for each server, what a user would fill in the
// bundle's form (made real on this machine: a directory, a database file, a PostgreSQL role, a git
// repository, a stand-in for the GitHub API), and one real call that goes through whatever the
// bundle must carry.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase } from './scratch-postgres.mjs';

function textOf(result) {
  return (result.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function expectCall(client, name, args, expected) {
  const result = await client.callTool({ name, arguments: args });
  const text = textOf(result);
  if (result.isError || !text.includes(expected)) throw new Error(`${name} answered ${result.isError ? 'an error' : 'without'} "${expected}": ${text.slice(0, 300)}`);
  return `${name} ok`;
}

/** A loopback stand-in for the GitHub REST API: GET /api/v3/user with the token the bundle was configured with. */
async function fakeGithub(token) {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    if (req.method === 'GET' && req.url === '/api/v3/user' && req.headers.authorization?.endsWith(` ${token}`)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ login: 'bundle-check', type: 'User', name: 'Bundle Check', public_repos: 1, followers: 0, html_url: 'https://github.example/bundle-check', created_at: '2020-01-01T00:00:00Z' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Not Found' }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * For each server: the user_config a user would give (made real in a temporary directory), a
 * probe (one real call that goes through whatever the bundle must carry: the SQLite addon and
 * query process, the log scan worker, the token in the environment), and a cleanup.
 */
export async function sampleConfig(name) {
  const tmp = realpathSync(await mkdtemp(path.join(os.tmpdir(), `suite-mcpb-${name}-`)));
  const cleanups = [() => rm(tmp, { recursive: true, force: true })];
  const done = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    switch (name) {
      case 'filesystem': {
        await writeFile(path.join(tmp, 'hello.txt'), 'hello from the bundle check\n');
        // A content search: it runs in the search workers, files of their own in the bundle.
        return { userConfig: { directories: [tmp] }, probe: (c) => expectCall(c, 'search_content', { path: tmp, pattern: 'bundle check', literal: true }, 'hello.txt:1:hello from the bundle check'), cleanup: done };
      }
      case 'sqlite': {
        // A zero-byte file is a valid empty SQLite database.
        await writeFile(path.join(tmp, 'empty.db'), '');
        return { userConfig: { database: path.join(tmp, 'empty.db') }, probe: (c) => expectCall(c, 'read_query', { query: "SELECT 6 * 7 AS answer, sqlite_version() AS v" }, '42'), cleanup: done };
      }
      case 'postgres': {
        const db = await createScratchDatabase({ prefix: 'suite_bundle_check' });
        cleanups.push(db.drop);
        return { userConfig: { database_url: db.roleUrl }, probe: (c) => expectCall(c, 'query', { sql: 'SELECT 6 * 7 AS answer' }, '42'), cleanup: done };
      }
      case 'logs': {
        await writeFile(path.join(tmp, 'app.log'), ['2024-01-15T10:00:00Z INFO started', '2024-01-15T10:00:01Z ERROR disk full on /var', '2024-01-15T10:00:02Z INFO stopped', ''].join('\n'));
        return { userConfig: { directories: [tmp] }, probe: (c) => expectCall(c, 'search_logs', { pattern: 'disk full', literal: true }, 'disk full on /var'), cleanup: done };
      }
      case 'git-prompts': {
        const git = (...args) => execFileSync('git', args, { cwd: tmp, stdio: 'pipe', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
        git('init', '-q', '-b', 'bundle-check');
        await writeFile(path.join(tmp, 'README.md'), '# sample\n');
        git('add', 'README.md');
        git('-c', 'user.name=Bundle Check', '-c', 'user.email=check@example.invalid', 'commit', '-q', '-m', 'first');
        return { userConfig: { repositories: [tmp] }, probe: (c) => expectCall(c, 'git_status', {}, 'bundle-check'), cleanup: done };
      }
      case 'github': {
        const token = 'ghp_bundlecheck0123456789';
        const fake = await fakeGithub(token);
        cleanups.push(fake.close);
        return {
          userConfig: { token, host: fake.origin },
          probe: async (c) => {
            await expectCall(c, 'get_me', {}, '@bundle-check');
            return `get_me ok (${fake.seen.length} request to the fake API)`;
          },
          cleanup: done,
        };
      }
      default:
        throw new Error(`no sample configuration for ${name}: add one to scripts/mcpb-samples.mjs`);
    }
  } catch (error) {
    await done();
    throw error;
  }
}
