#!/usr/bin/env node
// pnpm demo: a real MCP client session against the built servers, printing what a user would see.
// The filesystem server runs on a sample project it creates in a temporary directory; the SQLite
// server runs on its embedded demo database; the git-prompts server runs on the sample project made a
// git repository; the logs server tails and follows a log written there; the GitHub server talks to
// the fake GitHub of its tests on 127.0.0.1 (no network). Nothing outside the temporary directory is touched.
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

function indent(text, max = 25) {
  const lines = text.split('\n');
  const shown = lines.slice(0, max).map((l) => `    ${l}`);
  if (lines.length > max) shown.push(dim(`    … ${lines.length - max} more lines`));
  return shown.join('\n');
}

async function session(label, bin, args, env = {}) {
  if (!existsSync(bin)) {
    console.error(`${bin} is missing: run "npx -y pnpm@10 build" first.`);
    process.exit(1);
  }
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, ...args], env: { ...process.env, ...env }, stderr: 'pipe' });
  transport.stderr?.on('data', () => {});
  const client = new Client({ name: 'suite-demo', version: '1.0.0' });
  await client.connect(transport);
  const info = client.getServerVersion();
  console.log(`\n${bold(`━━ ${label}`)}  ${dim(`${info?.name} ${info?.version}, over stdio`)}`);
  return client;
}

async function call(client, name, args) {
  console.log(`\n${bold('▶')} ${name} ${dim(JSON.stringify(args))}`);
  const result = await client.callTool({ name, arguments: args });
  const text = result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  console.log(indent(text));
  if (result.isError) console.log(dim('    (isError: the model sees this message and can correct itself)'));
  return result;
}

const sample = await mkdtemp(path.join(os.tmpdir(), 'suite-demo-'));
try {
  await mkdir(path.join(sample, 'src'), { recursive: true });
  await mkdir(path.join(sample, 'docs'), { recursive: true });
  await writeFile(path.join(sample, 'README.md'), '# Sample project\n\nA tiny project for the suite demo.\n');
  await writeFile(path.join(sample, 'src', 'greet.ts'), "export function greet(name: string): string {\n  // TODO: localise\n  return `Hello, ${name}!`;\n}\n");
  await writeFile(path.join(sample, 'src', 'math.ts'), 'export const add = (a: number, b: number) => a + b;\n// TODO: subtract\n');
  await writeFile(path.join(sample, 'docs', 'notes.txt'), 'Release notes\n- first release\n');

  const fs = await session('filesystem server on a sample project', path.join(root, 'servers/filesystem/dist/index.js'), [sample]);
  const { tools } = await fs.listTools();
  console.log(`\n${tools.length} tools: ${tools.map((t) => `${t.name}${t.annotations?.readOnlyHint ? '' : '*'}`).join(', ')}`);
  console.log(dim('  (* = may change files; clients can ask before running those)'));
  await call(fs, 'list_allowed_directories', {});
  await call(fs, 'directory_tree', { path: sample });
  if (tools.some((t) => t.name === 'search_content')) await call(fs, 'search_content', { path: sample, pattern: 'TODO' });
  await call(fs, 'read_text_file', { path: path.join(sample, 'src', 'greet.ts'), head: 2 });
  await call(fs, 'edit_file', { path: path.join(sample, 'src', 'greet.ts'), edits: [{ oldText: 'Hello', newText: 'Welcome' }], dryRun: true });
  await call(fs, 'read_text_file', { path: '/etc/passwd' });
  await fs.close();

  const db = await session('SQLite server on its embedded demo database', path.join(root, 'servers/sqlite/dist/index.js'), ['--demo']);
  await call(db, 'list_tables', {});
  const tables = await db.callTool({ name: 'list_tables', arguments: {} });
  const first = tables.structuredContent?.tables?.[0]?.name ?? tables.structuredContent?.tables?.[0];
  if (typeof first === 'string') {
    await call(db, 'describe_table', { table_name: first });
    await call(db, 'read_query', { query: `SELECT * FROM "${first.replace(/"/g, '""')}" LIMIT 3` });
  }
  await call(db, 'read_query', { query: 'DELETE FROM customers' });
  await db.close();

  // git-prompts: the sample project becomes a repository with a staged change (git itself must be installed).
  const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.com', GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.com' };
  const git = (...args) => execFileSync('git', args, { cwd: sample, env: gitEnv, stdio: 'ignore' });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'feat: greet and add');
  git('branch', 'feature/localise');
  await writeFile(path.join(sample, 'src', 'greet.ts'), "export function greet(name: string, lang = 'en'): string {\n  return lang === 'fr' ? `Bonjour, ${name} !` : `Hello, ${name}!`;\n}\n");
  git('add', 'src/greet.ts');
  const repo = await session('git-prompts server on the same project, now a repository', path.join(root, 'servers/git-prompts/dist/index.js'), [sample]);
  const { prompts } = await repo.listPrompts();
  console.log(`\n${prompts.length} prompts (slash commands in clients): ${prompts.map((p) => `/${p.name}`).join(', ')}`);
  console.log(`\n${bold('▶')} prompts/get git-commit ${dim('(no arguments: the staged diff of the only repository)')}`);
  const commitPrompt = await repo.getPrompt({ name: 'git-commit', arguments: {} });
  for (const message of commitPrompt.messages) {
    if (message.content.type === 'text') console.log(indent(message.content.text, 12));
    else if (message.content.type === 'resource') console.log(`${dim(`    [embedded resource ${message.content.resource.uri}]`)}\n${indent(message.content.resource.text, 12)}`);
  }
  console.log(`\n${bold('▶')} completion/complete pr-description base ${dim('"fe"')}`);
  const completion = await repo.complete({ ref: { type: 'ref/prompt', name: 'pr-description' }, argument: { name: 'base', value: 'fe' } });
  console.log(indent(completion.completion.values.join('\n')));
  await call(repo, 'git_show', { revision: '--output=/tmp/pwned' });
  await repo.close();

  const logsDir = path.join(sample, 'logs');
  await mkdir(logsDir);
  const appLog = path.join(logsDir, 'app.log');
  const at = (minutesAgo) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  await writeFile(
    appLog,
    [
      `${at(9)} INFO  server listening on :8080`,
      `${at(7)} INFO  GET /orders 200 12ms`,
      `${at(5)} ERROR payment 4411 declined: card expired`,
      '    at Payments.charge (payments.js:88)',
      `${at(3)} WARN  slow query on orders (1840 ms)`,
      `${at(1)} INFO  GET /health 200 1ms`,
    ].join('\n') + '\n',
  );
  const logs = await session('logs server on a sample log', path.join(root, 'servers/logs/dist/index.js'), [logsDir]);
  await call(logs, 'tail_log', { path: appLog, lines: 4 });
  await call(logs, 'tail_log', { path: appLog, level: 'error' });
  const uri = `logs://file${appLog}`;
  const updated = new Promise((resolve) => {
    logs.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/resources/updated' && n.params?.uri === uri) resolve(n);
    };
  });
  await logs.subscribeResource({ uri });
  console.log(`\n${bold('▶')} resources/subscribe ${dim(uri)}, then a line is appended to app.log`);
  const appendedAt = Date.now();
  await appendFile(appLog, `${new Date().toISOString()} ERROR payment 4412 declined: insufficient funds\n`);
  const timeout = new Promise((resolve) => setTimeout(() => resolve(undefined), 5000).unref());
  const note = await Promise.race([updated, timeout]);
  console.log(note ? indent(`notifications/resources/updated ${note.params.uri} (${Date.now() - appendedAt} ms after the append)`) : indent('(no notification within 5 s)'));
  const { contents } = await logs.readResource({ uri: `${uri}?level=error` });
  console.log(`\n${bold('▶')} resources/read ${dim(`${uri}?level=error`)}`);
  console.log(indent(contents[0].text));
  await logs.close();

  // The fake GitHub of the github server's tests, seeded with a repository whose issue #1 hides
  // instructions in invisible characters and an HTML comment.
  const { loadFakeGithub } = await import('../servers/github/bench/load-fake.mjs');
  const { startFakeGithub, seed, TOKENS } = await loadFakeGithub();
  const fake = await startFakeGithub();
  seed(fake);
  try {
    const env = { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice, GITHUB_TOKEN: '' };
    const gh = await session('GitHub server, read-only and limited to acme/widgets, against a fake GitHub', path.join(root, 'servers/github/dist/index.js'), ['--read-only', '--repos', 'acme/widgets'], env);
    const { tools: ghTools } = await gh.listTools();
    console.log(`\n${ghTools.length} tools (read-only: every tool that writes is gone)`);
    await call(gh, 'get_issue', { owner: 'acme', repo: 'widgets', issue_number: 1 });
    console.log(dim('    (the issue hides instructions in tag characters and an HTML comment: the model never sees them)'));
    await call(gh, 'get_pull_request_status', { owner: 'acme', repo: 'widgets', pull_number: 3 });
    await call(gh, 'get_issue', { owner: 'acme', repo: 'gadgets', issue_number: 1 });
    await gh.close();
  } finally {
    await fake.close();
  }
  console.log(`\n${bold('Done.')} Add a server to your client: see README.md, "Use the servers in a client".`);
} finally {
  await rm(sample, { recursive: true, force: true });
}
