import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTempDir } from '@suite/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../src/diff.js';

const run = promisify(execFile);

/** A small deterministic PRNG so the random cases are the same on every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomText(random: () => number, lines: number): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', '', '  indented', '}', '{'];
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(words[Math.floor(random() * words.length)]!);
  return out.join('\n') + (random() < 0.7 ? '\n' : '');
}

function mutate(random: () => number, text: string): string {
  const lines = text.split('\n');
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (lines.length + 1));
    const roll = random();
    if (roll < 0.33) lines.splice(at, 1 + Math.floor(random() * 3));
    else if (roll < 0.66) lines.splice(at, 0, `inserted ${e}`, 'beta');
    else lines.splice(at, 1, `changed ${e}`);
  }
  let result = lines.join('\n');
  if (random() < 0.2) result = result.endsWith('\n') ? result.slice(0, -1) : `${result}\n`;
  return result;
}

describe('unified diff', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await makeTempDir('fs-diff-'));
  });
  afterAll(async () => cleanup());

  it('produces the same hunks as diff -u for a simple change', async () => {
    const before = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';
    const after = 'one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\nnine\nten\neleven\n';
    const { diff, stats } = unifiedDiff(before, after, 'a.txt', 'a.txt');
    expect(diff).toBe(
      ['--- a.txt', '+++ a.txt', '@@ -2,9 +2,10 @@', ' two', ' three', ' four', '-five', '+FIVE', ' six', ' seven', ' eight', ' nine', ' ten', '+eleven', ''].join('\n'),
    );
    expect(stats).toEqual({ added: 2, removed: 1, hunks: 1 });
    await writeFile(path.join(dir, 'before'), before);
    await writeFile(path.join(dir, 'after'), after);
    const reference = await run('diff', ['-u', 'before', 'after'], { cwd: dir }).catch((error: { stdout: string }) => error);
    const referenceHunks = reference.stdout.split('\n').slice(2).join('\n');
    expect(diff.split('\n').slice(2).join('\n')).toBe(referenceHunks);
  });

  it('marks a missing final newline like diff(1)', () => {
    const { diff } = unifiedDiff('a\nb', 'a\nb\n', 'f', 'f');
    expect(diff).toBe(['--- f', '+++ f', '@@ -1,2 +1,2 @@', ' a', '-b', '\\ No newline at end of file', '+b', ''].join('\n'));
  });

  it('returns an empty diff for equal texts and handles empty files', () => {
    expect(unifiedDiff('same\n', 'same\n', 'f', 'f').diff).toBe('');
    expect(unifiedDiff('', 'new\n', 'f', 'f').diff).toBe(['--- f', '+++ f', '@@ -0,0 +1 @@', '+new', ''].join('\n'));
    expect(unifiedDiff('old\n', '', 'f', 'f').diff).toBe(['--- f', '+++ f', '@@ -1 +0,0 @@', '-old', ''].join('\n'));
  });

  it('separates distant changes into hunks and merges close ones', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `l${i}`);
    const changed = [...lines];
    changed[2] = 'X';
    changed[30] = 'Y';
    const far = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, 'f', 'f');
    expect(far.stats.hunks).toBe(2);
    changed[8] = 'Z';
    const near = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, 'f', 'f');
    expect(near.stats.hunks).toBe(2);
    expect(near.diff).toContain('@@ -1,12 +1,12 @@');
  });

  it('is minimal for small random changes and always applies cleanly with patch(1)', async () => {
    const random = prng(20261121);
    for (let round = 0; round < 60; round++) {
      const before = randomText(random, 5 + Math.floor(random() * 60));
      const after = mutate(random, before);
      const { diff, stats } = unifiedDiff(before, after, 'file', 'file');
      const file = path.join(dir, `case-${round}`);
      await writeFile(file, before);
      await writeFile(`${file}.patch`, diff);
      if (diff.length > 0) await run('patch', ['-s', '-u', file, `${file}.patch`]);
      expect(await readFile(file, 'utf8'), `round ${round}`).toBe(after);
      // Compare the size of the edit with diff(1)'s minimal one.
      await writeFile(`${file}.before`, before);
      await writeFile(`${file}.after`, after);
      const reference = await run('diff', ['--minimal', '-u', `${file}.before`, `${file}.after`]).catch((error: { stdout: string }) => error);
      const refLines = reference.stdout.split('\n').slice(2);
      const refChanges = refLines.filter((l) => (l.startsWith('+') || l.startsWith('-')) && !l.startsWith('+++') && !l.startsWith('---')).length;
      expect(stats.added + stats.removed, `round ${round}`).toBe(refChanges);
    }
  });

  it('stays correct for a large file with a large change (falls back beyond the edit-distance limit)', async () => {
    const before = Array.from({ length: 50_000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const after = before
      .split('\n')
      .map((line, i) => (i % 7 === 0 && i > 0 ? `${line} changed` : line))
      .join('\n');
    const { diff } = unifiedDiff(before, after, 'big', 'big', { maxEditDistance: 500 });
    const file = path.join(dir, 'big');
    await writeFile(file, before);
    await writeFile(`${file}.patch`, diff);
    await run('patch', ['-s', '-u', file, `${file}.patch`], { maxBuffer: 64 * 1024 * 1024 });
    expect(await readFile(file, 'utf8')).toBe(after);
  });
});
