import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { makeTempDir } from '@suite/test-kit';
import { BIN, commit, git, makeRepo, writeFiles } from './helpers.js';

/** A repository with history, branches, a tag, staged and unstaged changes and an untracked file. */
function fill(repo: string): void {
  makeRepo(repo, { 'README.md': '# app\n', 'src/index.ts': 'export const a = 1;\n', 'docs/guide.md': 'Guide.\n' });
  commit(repo, { 'src/index.ts': 'export const a = 2;\nexport const b = 3;\n' }, 'feat: b\n\nWith a body.');
  git(repo, ['tag', 'v1.0.0']);
  git(repo, ['branch', 'feature/login']);
  writeFiles(repo, { 'src/staged.ts': 'export const staged = true;\n' });
  git(repo, ['add', 'src/staged.ts']);
  writeFiles(repo, { 'README.md': '# app\n\nChanged, not staged.\n', 'notes.txt': 'untracked\n' });
}

/**
 * The git-prompts server with --allow-write on a directory holding one repository (the test's own
 * home and git configuration, see setup-home.ts). The repository is rebuilt before each tool's
 * fuzzing, since the write tools change it.
 */
export const target: ConformanceTarget = {
  name: 'git-prompts',
  bin: BIN,
  async prepare() {
    const { dir, cleanup } = await makeTempDir('git-prompts-conformance-');
    const repo = path.join(dir, 'app');
    fill(repo);
    writeFiles(repo, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`gen/file-${i}.txt`, `content ${i}\n`.repeat(50)])));
    return {
      args: ['--allow-write', dir],
      cheapCall: { name: 'git_status', arguments: { repo_path: repo } },
      followed: {
        uri: 'git://app/log',
        // A ref moved (a branch created where HEAD is), as a fetch or a push would.
        change: async (round) => void git(repo, ['update-ref', `refs/heads/followed-${round}`, 'HEAD']),
        refused: ['git://no-such-repository/log', 'nothing://at/all'],
      },
      allowedPaths: [dir],
      samples: [
        repo, 'app', dir, 'main', 'feature/login', 'v1.0.0', 'HEAD', 'HEAD~1', 'HEAD^', 'HEAD:README.md', 'main:src/index.ts', 'README.md', 'src/index.ts', 'src', 'notes.txt', 'src/staged.ts', '.',
        'main..feature/login', 'feat: a change', 'fix: x\n\nbody', '2024-01-01', '1 week ago', '--cached', '--no-verify', '-D', 'refs/heads/main',
      ],
      namedSamples: {
        repo_path: [repo, 'app', repo],
        revision: ['HEAD', 'HEAD~1', 'v1.0.0', 'main', 'HEAD:README.md', 'main:src/index.ts', 'feature/login'],
        target: ['main', 'HEAD~1', 'v1.0.0', 'feature/login'],
        branch_name: ['feature/login', 'main', 'feature/new', 'fix/x'],
        base_branch: ['main', 'v1.0.0', 'HEAD~1'],
        files: ['README.md', 'notes.txt', 'src/staged.ts', 'src', '.'],
        path: ['src', 'README.md', 'src/index.ts'],
        message: ['feat: change', 'fix: bug\n\nbody'],
        contains: ['HEAD', 'main'],
        // The everyday tools (issue 29).
        onto: ['main', 'feature/login', 'v1.0.0'],
        commits: ['HEAD', 'v1.0.0', 'feature/login'],
        branch: ['feature/login', 'main'],
        new_branch: ['feature/new', 'wt/x'],
        name: ['v2.0.0', 'v1.0.0', 'release/1'],
        paths: ['README.md', 'src/index.ts', 'src', 'notes.txt'],
        source: ['HEAD', 'HEAD~1', 'v1.0.0'],
        ref: ['HEAD', 'main', 'refs/stash'],
        pattern: ['v*', 'v1.*'],
      },
      inFlight: {
        // Staging and committing 200 new files, with reads between: the signal lands while git holds the index lock.
        calls: [
          { name: 'git_add', arguments: { repo_path: repo, files: ['gen'] } },
          { name: 'git_status', arguments: { repo_path: repo } },
          { name: 'git_commit', arguments: { repo_path: repo, message: 'chore: generated files' } },
          { name: 'git_diff_staged', arguments: { repo_path: repo } },
          { name: 'git_log', arguments: { repo_path: repo, max_count: 50 } },
        ],
        directories: [dir],
        async check() {
          // git removes its lock on SIGTERM; a lock left behind would block every later git command.
          expect(existsSync(path.join(repo, '.git', 'index.lock'))).toBe(false);
          // Dangling objects are normal (an add later unstaged); missing or broken ones are not.
          expect(git(repo, ['fsck', '--no-dangling', '--no-progress']).trim()).toBe('');
          git(repo, ['status', '--porcelain']);
        },
      },
      fuzz: {
        numRuns: 150,
        async reset() {
          await rm(repo, { recursive: true, force: true });
          fill(repo);
        },
      },
      cleanup,
    };
  },
};
