#!/usr/bin/env node
// node scripts/check-readmes.mjs: what a new user reads, held to the repository (after a build).
//   servers    the root README's server table and benchmark table each have a row for every package
//              under servers/ (its first cell names the server or links to its README);
//   npx -y     no `npx` runs pnpm@ without -y (on a fresh machine npx stops to ask), in any README,
//              anywhere under scripts/ (the template included) or in the packages' files;
//   test counts no hand-written number of tests in a README ("493 tests"): they are wrong by the next
//              change; the test runner prints the real one;
//   --help     every flag of the Options section of a server's built bin (`--help`) and every
//              environment variable its Environment section names appears in that server's README;
//   tables     no Markdown table is cut in two by a blank line (rows after it with no header row).
// Then a self-test: a copy of the files, broken one way at a time, must fail each check (a check
// that cannot fail proves nothing). --self-test runs only that. Exits 1 on any problem.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Scaffolded and removed again by scripts/check-template.mjs while the tests run: not a server of the README.
const SCAFFOLD = 'template-check';
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'dist-bundles', '.bench', 'coverage', '.changeset']);
const TEXT_FILE = /\.(md|mjs|cjs|js|ts|json|ya?ml|sh)$/;

/** The server packages under servers/ of `dir`. */
function serverNames(dir) {
  return readdirSync(path.join(dir, 'servers'))
    .filter((name) => name !== SCAFFOLD && existsSync(path.join(dir, 'servers', name, 'package.json')))
    .filter((name) => !JSON.parse(readFileSync(path.join(dir, 'servers', name, 'package.json'), 'utf8')).private)
    .sort();
}

/** Every text file under `dir` (relative paths), without dependencies and build output. */
function textFiles(dir, rel = '') {
  const files = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) files.push(...textFiles(dir, child));
    } else if (TEXT_FILE.test(entry.name) && entry.name !== 'pnpm-lock.yaml') files.push(child);
  }
  return files;
}

const isReadme = (file) => /(^|\/)README[^/]*\.md$/.test(file);

/** The lines of a Markdown file outside fenced code blocks, with their line numbers. */
function proseLines(text) {
  const lines = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ line, n: i + 1 });
  });
  return lines;
}

/** The Markdown tables of a file: each a list of { cells, n }, the header row first. */
function tables(text) {
  const found = [];
  let current;
  for (const { line, n } of proseLines(text)) {
    if (/^\s*\|/.test(line)) {
      const cells = line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
      if (!current) found.push((current = []));
      current.push({ cells, n, line });
    } else current = undefined;
  }
  return found;
}

const isDelimiterRow = (row) => row !== undefined && row.cells.every((c) => /^:?-{3,}:?$/.test(c));

/** Whether a table's first cell names `name`: `name`, [name](servers/name/README.md), `@suite/server-name`. */
function namesServer(cell, name) {
  const links = [...cell.matchAll(/\]\(([^)]*)\)/g)].map((m) => m[1]);
  if (links.some((url) => new RegExp(`(^|/)servers/${name}(/|$)`).test(url))) return true;
  const text = cell.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '').trim();
  return text === name || text === `@suite/server-${name}`;
}

/** What a server's --help lists: the flags of its Options section and the variables of its Environment section. */
export function helpSurface(help) {
  const section = (title) => new RegExp(`(?:^|\\n)${title}:\\n([\\s\\S]*?)(?:\\n\\n|\\n?$)`).exec(help)?.[1] ?? '';
  const flags = new Set([...section('Options').matchAll(/^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)/gm)].map((m) => m[1]));
  const environment = section('Environment');
  const variables = new Set();
  for (const line of environment.split('\n')) {
    const names = /^ {2}([A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*)\s/.exec(line)?.[1];
    if (names) for (const name of names.split(', ')) variables.add(name);
  }
  // Variables named in the descriptions too ("GITHUB_TOKEN is read too").
  for (const m of environment.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) variables.add(m[0]);
  return { flags, variables };
}

/** The --help of every built server of the repository, by name. */
function helpsOf(dir) {
  const helps = new Map();
  for (const name of serverNames(dir)) {
    const bin = path.join(dir, 'servers', name, 'dist', 'index.js');
    if (!existsSync(bin)) throw new Error(`servers/${name}/dist/index.js is missing: build first (npx -y pnpm@10 build)`);
    helps.set(name, execFileSync(process.execPath, [bin, '--help'], { encoding: 'utf8', timeout: 30_000 }));
  }
  return helps;
}

/** Every problem of the files under `dir`; `helps`: each server's --help text. */
export function check(dir, helps) {
  const problems = [];
  const servers = serverNames(dir);
  const files = textFiles(dir);
  const read = (file) => readFileSync(path.join(dir, file), 'utf8');

  // The root README's tables of servers.
  const rootTables = tables(read('README.md'));
  for (const [what, second] of [
    ['server table', 'package'],
    ['benchmark table', 'against'],
  ]) {
    const table = rootTables.find((t) => t[0].cells[0] === 'server' && t[0].cells[1] === second);
    if (!table) {
      problems.push(`README.md: no ${what} (a table headed | server | ${second} |)`);
      continue;
    }
    for (const name of servers) {
      if (!table.slice(2).some((row) => namesServer(row.cells[0], name))) problems.push(`README.md:${table[0].n}: the ${what} has no row for servers/${name}`);
    }
  }

  // npx running pnpm without -y.
  for (const file of files) {
    read(file)
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(/\bnpx((?:\s+-[\w-]+)*)\s+pnpm@/g)) {
          if (!/\s(-y|--yes)\b/.test(m[1])) problems.push(`${file}:${i + 1}: npx without -y before pnpm@ (on a fresh machine npx stops to ask): ${line.trim()}`);
        }
      });
  }

  for (const file of files.filter(isReadme)) {
    const text = read(file);
    // Hand-written test counts, also across a line break.
    const prose = proseLines(text);
    const starts = [];
    let joined = '';
    for (const { line } of prose) {
      starts.push(joined.length);
      joined += `${line} `;
    }
    for (const m of joined.matchAll(/\b\d[\d,]*(?:\s+[A-Za-z][\w-]*){0,2}\s+tests\b/g)) {
      const at = prose[starts.findLastIndex((s) => s <= m.index)].n;
      problems.push(`${file}:${at}: a hand-written test count ("${m[0]}"), wrong by the next change: drop it`);
    }
    // A table whose rows have no header: cut from the table above by a blank line.
    for (const table of tables(text)) {
      if (!isDelimiterRow(table[1])) problems.push(`${file}:${table[0].n}: table rows with no header row under them (a table cut in two by a blank line?): ${table[0].line.slice(0, 80)}`);
    }
  }

  // Every flag and variable of --help in the server's README.
  for (const name of servers) {
    const file = path.join('servers', name, 'README.md');
    if (!existsSync(path.join(dir, file))) {
      problems.push(`${file} is missing`);
      continue;
    }
    const help = helps.get(name);
    if (help === undefined) {
      problems.push(`servers/${name}: no --help to compare its README with`);
      continue;
    }
    const readme = read(file);
    const { flags, variables } = helpSurface(help);
    if (flags.size === 0) problems.push(`servers/${name}: its --help has no Options section with flags`);
    for (const flag of flags) if (!new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(readme)) problems.push(`${file}: does not document ${flag}, which --help lists`);
    for (const variable of variables) if (!new RegExp(`\\b${variable}\\b`).test(readme)) problems.push(`${file}: does not mention ${variable}, which --help names under Environment`);
  }
  return problems;
}

/** A copy of the files the checks read, broken one way at a time: each must be caught. */
function selfTest(helps) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'suite-check-readmes-'));
  let failures = 0;
  const npxNoY = ['npx', 'pnpm@10'].join(' ');
  const replace = (file, from, to) => (text) => {
    if (!text.includes(from)) throw new Error(`${file} no longer holds ${JSON.stringify(from)}: update the self-test`);
    return text.split(from).join(to);
  };
  const dropRow = (start) => (text) => {
    const lines = text.split('\n');
    const i = lines.findIndex((l) => l.startsWith(start));
    if (i < 0) throw new Error(`no row starting ${start}: update the self-test`);
    lines.splice(i, 1);
    return lines.join('\n');
  };
  const mistakes = [
    ['the server table without logs', 'README.md', dropRow('| [logs](servers/logs/README.md) |'), /server table has no row for servers\/logs/],
    ['the benchmark table without logs', 'README.md', dropRow('| logs | GNU'), /benchmark table has no row for servers\/logs/],
    ['a README line running pnpm through npx without -y', 'servers/sqlite/README.md', replace('servers/sqlite/README.md', 'npx -y pnpm@10 bench sqlite', `${npxNoY} bench sqlite`), /servers\/sqlite\/README\.md:\d+: npx without -y/],
    ['the scaffold script printing npx without -y', 'scripts/new-server.mjs', replace('scripts/new-server.mjs', 'npx -y pnpm@10 install', `${npxNoY} install`), /scripts\/new-server\.mjs:\d+: npx without -y/],
    ['a hand-written test count', 'servers/github/README.md', (text) => `${text}\nThe suite has 493\ntests.\n`, /servers\/github\/README\.md:\d+: a hand-written test count/],
    ['a flag of --help missing from the README', 'servers/filesystem/README.md', replace('servers/filesystem/README.md', '--read-timeout', '--read-time-out'), /filesystem\/README\.md: does not document --read-timeout/],
    ['a variable of --help missing from the README', 'servers/github/README.md', replace('servers/github/README.md', 'GITHUB_LOCKDOWN_MODE', 'GITHUB_LOCKDOWN'), /github\/README\.md: does not mention GITHUB_LOCKDOWN_MODE/],
    ['a table cut by a blank line', 'servers/filesystem/README.md', replace('servers/filesystem/README.md', '| — |\n| Time one', '| — |\n\n| Time one'), /filesystem\/README\.md:\d+: table rows with no header/],
  ];
  try {
    const copy = path.join(work, 'repo');
    cpSync(root, copy, { recursive: true, filter: (src) => !SKIP_DIRS.has(path.basename(src)) || src === root });
    const base = check(copy, helps);
    if (base.length) {
      failures++;
      console.error(`FAIL self-test: the unbroken copy already has problems: ${base.join('; ')}`);
    }
    for (const [what, file, change, expect] of mistakes) {
      const target = path.join(copy, file);
      const before = readFileSync(target, 'utf8');
      try {
        writeFileSync(target, change(before));
        const problems = check(copy, helps);
        if (problems.some((p) => expect.test(p))) console.log(`ok   self-test: ${what} is caught`);
        else {
          failures++;
          console.error(`FAIL self-test: ${what} is not caught (${problems.join('; ') || 'no problem reported'})`);
        }
      } catch (error) {
        failures++;
        console.error(`FAIL self-test: ${what}: ${error.message}`);
      } finally {
        writeFileSync(target, before);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`readmes self-test: ${mistakes.length + 1 - failures} of ${mistakes.length + 1} cases right`);
  return failures === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let helps;
  try {
    helps = helpsOf(root);
  } catch (error) {
    console.error(`FAIL readmes: ${error.message}`);
    process.exit(1);
  }
  let ok = true;
  if (!process.argv.includes('--self-test')) {
    const problems = check(root, helps);
    for (const p of problems) console.error(`FAIL ${p}`);
    const checked = textFiles(root).filter(isReadme).length;
    console.log(`readmes: ${problems.length === 0 ? 'ok' : `${problems.length} problem${problems.length === 1 ? '' : 's'}`} (${checked} READMEs, ${helps.size} servers' --help)`);
    ok = problems.length === 0;
  }
  ok = selfTest(helps) && ok;
  process.exit(ok ? 0 : 1);
}
