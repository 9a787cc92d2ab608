import { mkdtempSync, realpathSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, makeRepo, writeFiles } from './helpers.js';

/** Lines someone else committed: markup, a closing script tag, an event handler. */
export const HOSTILE = [
  `<img src=x onerror="parent.postMessage('pwned-img','*')">`,
  `</script><script>parent.postMessage('pwned-script','*')</script>`,
];
/** A file name that is markup. */
export const HOSTILE_NAME = `<svg onload=alert(1)>.txt`;

const lines = (n: number, word: string): string => Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join('\n') + '\n';

/**
 * A repository with a staged change of every kind: a modified file, an added one, a deleted one,
 * a renamed and edited one, a binary one, hostile lines and a hostile file name, and a file whose
 * diff is over the per-file budget (cut with a note).
 */
export function diffRepo(): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'git-apps-')));
  const repo = path.join(dir, 'app');
  makeRepo(repo, {
    'src/app.ts': lines(40, 'const line'),
    'src/old-name.ts': lines(30, 'export const x'),
    'docs/gone.md': '# gone\n\nThis file is deleted.\n',
    'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 0, 4]),
    'big.txt': lines(3000, 'big line'),
  });
  writeFiles(repo, {
    'src/app.ts': lines(40, 'const line').replace('const line 5\n', 'const line five\n').replace('const line 30\n', `const line 30\n${HOSTILE.join('\n')}\n`),
    'src/new.ts': 'export const added = true;\n',
    'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9, 0, 0, 4, 5]),
    'big.txt': lines(3000, 'BIG LINE'),
    [HOSTILE_NAME]: 'a file with a hostile name\n',
  });
  unlinkSync(path.join(repo, 'docs/gone.md'));
  renameSync(path.join(repo, 'src/old-name.ts'), path.join(repo, 'src/new-name.ts'));
  writeFiles(repo, { 'src/new-name.ts': lines(30, 'export const x').replace('export const x 3\n', 'export const x three\n') });
  git(repo, ['add', '--all']);
  return { dir: repo, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** git's own staged diff, as a reviewer would run it. */
export function gitStagedDiff(repo: string): string {
  return git(repo, ['-c', 'core.quotePath=false', 'diff', '--cached', '--no-color', '--no-ext-diff', '-M']);
}

/** The +, - and context lines of git's diff for one file, in order. */
export function hunkLines(diff: string, file: string): string[] {
  const sections = diff.split(/^(?=diff --git )/m);
  const section = sections.find((s) => s.split('\n')[0]!.endsWith(` b/${file}`));
  if (!section) return [];
  const out: string[] = [];
  let inHunk = false;
  for (const line of section.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && /^[-+ ]/.test(line)) out.push(line);
  }
  return out;
}

/** A staged change of `files` files of 20 lines each, two lines edited in each: a large diff of many small hunks. */
export function largeDiffRepo(files: number): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'git-apps-large-')));
  const repo = path.join(dir, 'app');
  const name = (i: number): string => `src/m${String(Math.floor(i / 100)).padStart(2, '0')}/f${String(i).padStart(4, '0')}.ts`;
  const before = Object.fromEntries(Array.from({ length: files }, (_, i) => [name(i), lines(20, `export const v${i}_`)]));
  makeRepo(repo, before);
  writeFiles(repo, Object.fromEntries(Object.entries(before).map(([file, text]) => [file, text.replace(' 3\n', ' three\n').replace(' 15\n', ' fifteen\n')])));
  git(repo, ['add', '--all']);
  return { dir: repo, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
