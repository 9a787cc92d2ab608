import { ToolError, type ResourceTemplateDefinition, type RequestContext, type TemplateVariables } from '@suite/shared';
import { completeRange, completeRepository } from '../completion.js';
import { compactLog, readLog } from '../git/log.js';
import { resolveRange } from '../git/revisions.js';
import { gitUri, TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { subscribeToRepository } from './changes.js';
import { perRepository } from './listing.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 500;
/** A range can hold a whole history: cap it, and say so. */
const MAX_RANGE_COMMITS = 300;

async function readCommits(ws: Workspace, uri: string, variables: TemplateVariables, ctx: RequestContext, limit: number, range?: string): Promise<{ uri: string; mimeType: string; text: string }> {
  const repo = await ws.resolve(ctx, variables.repo);
  const resolved = range !== undefined ? await resolveRange(repo, range, ctx.signal) : undefined;
  const { commits, more } = await readLog(repo, { maxCount: limit, ...(resolved ? { range: { from: resolved.from, to: resolved.to } } : {}), signal: ctx.signal });
  const what = range !== undefined ? `in ${range}` : 'on the current branch';
  let text = commits.length === 0 ? `# No commits ${what} in ${repo.name}.\n` : `${compactLog(commits)}\n`;
  if (more) text += `# … more commits ${what}: only the ${limit} newest are shown.\n`;
  return { uri, mimeType: 'text/plain', text };
}

function parseLimit(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_LIMIT;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIMIT) throw ToolError.invalidArgument(`limit must be a whole number from 1 to ${MAX_LIMIT}.`);
  return Number(value);
}

const repoCompleter = (ws: Workspace) => ({ repo: (value: string, _context: unknown, ctx: RequestContext) => completeRepository(ws, ctx, value) });

/** `git://{repo}/log`: the 20 newest commits of the current branch; `git://{repo}/log?limit=N` for N. */
export function logResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.log,
    name: 'log',
    title: 'Recent commits',
    description: `The newest commits of the current branch (${DEFAULT_LIMIT}, or limit from 1 to ${MAX_LIMIT}), one line each with the message body indented below.`,
    mimeType: 'text/plain',
    read: (uri, variables, ctx) => readCommits(ws, uri, variables, ctx, parseLimit(variables.limit)),
    list: async (_cursor, ctx) => perRepository(ws, ctx, (repo) => ({ uri: gitUri.log(repo), name: `${repo} recent commits`, mimeType: 'text/plain' })),
    subscribe: subscribeToRepository(ws),
    complete: { ...repoCompleter(ws), limit: (value) => ['10', '20', '50', '100'].filter((v) => v.startsWith(value)) },
  };
}

/** `git://{repo}/log/{range}`: the commits of a range (`v1.2.0..HEAD`, or `v1.2.0` for the same). */
export function logRangeResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.logRange,
    name: 'log-range',
    title: 'Commits of a range',
    description: `The commits of a range, newest first (at most ${MAX_RANGE_COMMITS}): A..B, or A alone for A..HEAD (e.g. v1.2.0). Percent-encode the range.`,
    mimeType: 'text/plain',
    read: (uri, variables, ctx) => readCommits(ws, uri, variables, ctx, MAX_RANGE_COMMITS, variables.range ?? ''),
    subscribe: subscribeToRepository(ws),
    complete: { ...repoCompleter(ws), range: (value, context, ctx) => completeRange(ws, ctx, context.arguments.repo, value) },
  };
}
