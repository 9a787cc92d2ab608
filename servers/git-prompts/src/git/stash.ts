import { ToolError } from '@suite/shared';
import { cutOutput, type GitRepository } from './repository.js';

export interface StashEntry {
  index: number;
  /** `stash@{n}`. */
  name: string;
  commit: string;
  /** The message git recorded ("WIP on main: …" or "On main: <message>"). */
  message: string;
  /** When the stash was made, ISO 8601. */
  date: string;
  /** The commit the stash was made on. */
  base: string;
}

/** The stash, newest first (`git log -g refs/stash`, what `git stash list` runs). */
export async function listStash(repo: GitRepository, signal?: AbortSignal): Promise<{ entries: StashEntry[]; cut: boolean }> {
  const exists = await repo.run(['rev-parse', '--verify', '--quiet', 'refs/stash'], signal ? { signal } : {});
  if (!exists.ok) return { entries: [], cut: false };
  const result = await repo.run(['log', '--walk-reflogs', '-z', '--format=%H%x00%gs%x00%aI%x00%P', 'refs/stash', '--'], signal ? { signal } : {});
  if (!result.ok) throw repo.failure(result, 'git stash list');
  const { text, cut } = cutOutput(result, '\0');
  const fields = text.split('\0');
  const entries: StashEntry[] = [];
  for (let i = 0; i + 4 <= fields.length; i += 4) {
    const commit = fields[i]!.replace(/^\n/, '');
    if (!/^[0-9a-f]{40}/.test(commit)) break;
    const index = entries.length;
    entries.push({ index, name: `stash@{${index}}`, commit, message: fields[i + 1]!, date: fields[i + 2]!, base: (fields[i + 3] ?? '').split(' ')[0] ?? '' });
  }
  return { entries, cut };
}

/** The stash entry `index` (a whole number, so the ref text is ours), with its commits. */
export async function stashEntry(repo: GitRepository, index: number, signal?: AbortSignal): Promise<{ ref: string; commit: string; base: string; untracked?: string }> {
  const ref = `refs/stash@{${index}}`;
  const opts = signal ? { signal } : {};
  const commit = await repo.run(['rev-parse', '--verify', '--quiet', ref], opts);
  if (!commit.ok) {
    const { entries } = await listStash(repo, signal);
    throw ToolError.notFound(entries.length === 0 ? `${repo.name} has no stash entries.` : `There is no stash@{${index}} in ${repo.name}: it has ${entries.length === 1 ? 'only stash@{0}' : `stash@{0} to stash@{${entries.length - 1}}`}.`);
  }
  const oid = commit.stdout.trim();
  const parents = (await repo.read(['rev-list', '--parents', '-n', '1', oid, '--'], 'git rev-list', opts)).trim().split(' ').slice(1);
  return { ref, commit: oid, base: parents[0]!, ...(parents[2] ? { untracked: parents[2] } : {}) };
}
