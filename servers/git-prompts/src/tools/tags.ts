import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { cutOutput } from '../git/repository.js';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';
import { branchNameProblem } from './branches.js';

const MAX_TAGS = 1000;

const listInput = z.object({
  repo_path: repoPath,
  pattern: z.string().min(1).max(200).optional().describe('Only tags matching this glob (e.g. v1.*).'),
  max_count: z.number().int().min(1).max(MAX_TAGS).default(100).describe(`How many tags, newest first (default 100, at most ${MAX_TAGS}).`),
});
const tag = z.object({ name: z.string(), annotated: z.boolean(), commit: z.string(), date: z.string(), subject: z.string(), tagger: z.string().optional() });
const listOutput = z.object({ repository: z.string(), tags: z.array(tag), more: z.boolean() });

export function gitTagList(ws: Workspace): ToolDefinition<typeof listInput, typeof listOutput> {
  return {
    name: 'git_tag_list',
    toolset: 'inspect',
    description: 'Lists tags, newest first: each with the commit it points at, whether it is annotated, its date and subject (the tag message for annotated tags, the commit subject otherwise).',
    input: listInput,
    output: listOutput,
    annotations: { title: 'List tags', ...READ_ONLY },
    handler: async ({ repo_path, pattern, max_count }, ctx) => {
      if (pattern !== undefined && (pattern.startsWith('-') || /[\0\n\r]/.test(pattern))) throw ToolError.invalidArgument('The pattern may not start with "-" or hold control characters.');
      const repo = await ws.resolve(ctx, repo_path);
      const result = await repo.run(
        ['for-each-ref', '--sort=-creatordate', `--count=${max_count + 1}`, '--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objectname)%00%(creatordate:iso-strict)%00%(taggername)%00%(contents:subject)%00', pattern ? `refs/tags/${pattern}` : 'refs/tags'],
        { signal: ctx.signal },
      );
      if (!result.ok) throw repo.failure(result, 'Listing tags');
      const { text, cut } = cutOutput(result, '\0\n');
      const tags = text
        .split('\0\n')
        .filter(Boolean)
        .map((line) => {
          const [name = '', type = '', object = '', peeled = '', date = '', tagger = '', subject = ''] = line.split('\0');
          return { name, annotated: type === 'tag', commit: peeled || object, date, subject, ...(tagger ? { tagger } : {}) };
        });
      const more = cut || tags.length > max_count;
      const shown = tags.slice(0, max_count);
      const lines = shown.map((t) => `${t.name}  ${t.commit.slice(0, 12)}  ${t.date.slice(0, 10)}  ${t.annotated ? '(annotated) ' : ''}${t.subject}`);
      const out =
        shown.length === 0
          ? `No tags${pattern ? ` match ${pattern}` : ''} in ${repo.name}.`
          : `Tags of ${repo.name}${pattern ? ` matching ${pattern}` : ''} (${countOf(shown.length, 'tag')}${more ? ', more exist: raise max_count' : ''}):\n${lines.join('\n')}`;
      return { text: out, structured: { repository: repo.name, tags: shown, more } };
    },
  };
}

/** Tag names follow the same rules as branch names (check-ref-format), without the branch-only ones. */
function checkTagName(name: string): void {
  const problem = branchNameProblem(name);
  if (problem) throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid tag name: ${problem.replace('git_branch lists it (without refs/heads/)', 'git_tag_list lists it')}.`);
}

const createInput = z.object({
  repo_path: repoPath,
  name: z.string().min(1).max(200).describe('The new tag, e.g. v1.2.0.'),
  target: z.string().min(1).max(256).default('HEAD').describe('What it points at: a branch, tag or commit (default HEAD).'),
  message: z.string().min(1).max(20_000).optional().describe('Makes an annotated tag with this message; without it the tag is lightweight.'),
});

export function gitTagCreate(ws: Workspace): ToolDefinition<typeof createInput> {
  return {
    name: 'git_tag_create',
    toolset: 'tags',
    description: 'Creates a tag: lightweight, or annotated when a message is given (tagger: your global git identity). Never replaces an existing tag; never signed.',
    input: createInput,
    annotations: { title: 'Create a tag', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, name, target, message }, ctx) => {
      checkTagName(name);
      const repo = await ws.resolve(ctx, repo_path);
      if ((await repo.run(['check-ref-format', `refs/tags/${name}`], { signal: ctx.signal })).ok === false) throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid tag name: git check-ref-format refuses it.`);
      if ((await repo.run(['rev-parse', '--verify', '--quiet', `refs/tags/${name}`], { signal: ctx.signal })).ok) throw ToolError.conflict(`A tag named ${name} already exists in ${repo.name}; it was left as it is.`);
      const oid = await resolveRevision(repo, target, { what: 'target', signal: ctx.signal });
      const args = message !== undefined ? ['tag', '--no-sign', '--annotate', '--cleanup=strip', '--file=-', '--', name, oid] : ['tag', '--no-sign', '--', name, oid];
      const result = await repo.write(args, 'git tag', { signal: ctx.signal, ...(message !== undefined ? { input: `${message.trim()}\n` } : {}) });
      if (!result.ok) {
        if (/Please tell me who you are|empty ident name|unable to auto-detect email/.test(result.stderr)) {
          throw ToolError.conflict('git does not know who you are, which an annotated tag needs. Set user.name and user.email in your global git configuration, or make a lightweight tag (no message).');
        }
        throw repo.failure(result, 'git tag');
      }
      return `Created ${message !== undefined ? 'annotated' : 'lightweight'} tag ${name} at ${oid.slice(0, 12)} in ${repo.name}.`;
    },
  };
}

const deleteInput = z.object({ repo_path: repoPath, name: z.string().min(1).max(200).describe('The tag to delete.') });

export function gitTagDelete(ws: Workspace): ToolDefinition<typeof deleteInput> {
  return {
    name: 'git_tag_delete',
    toolset: 'tags',
    description: 'Deletes a local tag (git tag -d). The answer gives what it pointed at, to make it again. Remote tags are not touched.',
    input: deleteInput,
    annotations: { title: 'Delete a tag', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, name }, ctx) => {
      checkTagName(name);
      const repo = await ws.resolve(ctx, repo_path);
      const found = await repo.run(['rev-parse', '--verify', '--quiet', `refs/tags/${name}`], { signal: ctx.signal });
      if (!found.ok) throw ToolError.notFound(`There is no tag ${name} in ${repo.name}; git_tag_list lists the tags.`);
      const oid = found.stdout.trim();
      const result = await repo.write(['tag', '--delete', '--', name], 'git tag -d', { signal: ctx.signal });
      if (!result.ok) throw repo.failure(result, 'git tag -d');
      return `Deleted tag ${name} (was ${oid.slice(0, 12)}) in ${repo.name}. To make it again: git update-ref refs/tags/${name} ${oid}`;
    },
  };
}
