import type { DiffBudget } from '../config.js';
import { renderDiff } from './diff.js';
import { parseLog, type Commit } from './log.js';
import { countOf, formatBytes } from '@suite/shared';
import { cutOutput, type GitRepository } from './repository.js';
import { resolveRevision } from './revisions.js';

/** How much of a file (a blob) is shown. */
const MAX_BLOB_BYTES = 256 * 1024;
/** How much of a tree's listing is read (about 10,000 entries). */
const TREE_LISTING_BYTES = 1024 * 1024;

export interface ShownObject {
  oid: string;
  type: 'commit' | 'tree' | 'blob' | 'tag';
  text: string;
  commit?: Commit;
}

/**
 * What `git show` shows, built from plumbing so that nothing is run on the content: a commit with
 * its message and its diff against its first parent (within the budget), a tag's text, a tree's
 * listing, a file's content (`HEAD:path`), with binary files summarised.
 */
export async function showRevision(repo: GitRepository, revision: string, budget: DiffBudget, signal?: AbortSignal): Promise<ShownObject> {
  const opts = signal ? { signal } : {};
  const oid = await resolveRevision(repo, revision, opts);
  const type = (await repo.read(['cat-file', '-t', oid], 'git cat-file', opts)).trim() as ShownObject['type'];
  switch (type) {
    case 'commit': {
      const [commit] = parseLog(await repo.read(['log', '-1', '-z', '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%b', oid, '--'], 'git log', opts));
      if (!commit) throw repo.failure({ stderr: 'no commit', exitCode: 1 }, 'git show');
      const diff = await renderDiff(repo, {
        source: { kind: 'commits', from: commit.parents[0], to: oid },
        budget,
        ...(signal ? { signal } : {}),
        seeMore: 'To see one of these files, call git_show with revision set to <commit>:<path>.',
      });
      const header = [
        `commit ${commit.hash}`,
        ...(commit.parents.length > 1 ? [`Merge: ${commit.parents.map((p) => p.slice(0, 12)).join(' ')} (diff against the first parent)`] : []),
        `Author: ${commit.author} <${commit.email}>`,
        `Date:   ${commit.date}`,
        '',
        ...`${commit.subject}${commit.body ? `\n\n${commit.body}` : ''}`.split('\n').map((l) => `    ${l}`),
        '',
      ].join('\n');
      return { oid, type, text: `${header}\n${diff.text || '(no changes)\n'}`, commit };
    }
    case 'tag':
      return { oid, type, text: await repo.read(['cat-file', 'tag', oid], 'git cat-file', opts) };
    case 'tree': {
      const result = await repo.run(['ls-tree', '-z', '--long', oid], { ...opts, maxOutputBytes: TREE_LISTING_BYTES });
      if (!result.ok) throw repo.failure(result, 'git ls-tree');
      const listing = cutOutput(result, '\0');
      const lines = listing.text
        .split('\0')
        .filter(Boolean)
        .map((entry) => {
          const [meta = '', name = ''] = entry.split('\t');
          const [, kind = '', , size = ''] = meta.split(/\s+/);
          return kind === 'tree' ? `${name}/` : `${name}${size && size !== '-' ? `  (${countOf(Number(size), 'byte')})` : ''}`;
        });
      if (listing.cut) lines.push(`[… the listing is longer than ${formatBytes(TREE_LISTING_BYTES)}: only its first ${countOf(lines.length, 'entry', 'entries')} are shown]`);
      return { oid, type, text: `${lines.join('\n')}\n` };
    }
    case 'blob': {
      const size = Number((await repo.read(['cat-file', '-s', oid], 'git cat-file', opts)).trim());
      const content = await repo.run(['cat-file', 'blob', oid], { ...opts, maxOutputBytes: MAX_BLOB_BYTES });
      if (!content.ok) throw repo.failure(content, 'git cat-file');
      // A NUL in the first 8 KiB is git's own test for binary content.
      if (content.stdout.slice(0, 8000).includes('\0')) return { oid, type, text: `Binary file, ${countOf(size, 'byte')}: not shown.\n` };
      const text = content.truncated.stdout ? `${content.stdout.slice(0, content.stdout.lastIndexOf('\n[… output truncated'))}\n[… file cut at ${MAX_BLOB_BYTES / 1024} KiB of ${countOf(size, 'byte')}]\n` : content.stdout;
      return { oid, type, text };
    }
    default:
      return { oid, type, text: `Object ${oid} of type ${String(type)}.\n` };
  }
}
