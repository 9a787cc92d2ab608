import { z } from 'zod';
import type { PromptMessage, RequestContext } from '@suite/shared';
import { completeRepository } from '../completion.js';
import type { GitRepository } from '../git/repository.js';
import type { Workspace } from '../workspace.js';

/** Every prompt's `repo` argument: optional, single-token, completed from the roots. */
export const repoArgument = z.string().max(4096).optional().describe('The repository (a name offered by completion, or a path). Optional when only one is available.');

export function say(text: string): PromptMessage {
  return { role: 'user', content: { type: 'text', text } };
}

/** A git:// resource of this server as embedded content: the client can show it and fetch it again. */
export async function embed(ctx: RequestContext, uri: string): Promise<PromptMessage[]> {
  return (await ctx.embedResource(uri)).map((content) => ({ role: 'user' as const, content }));
}

export function repoCompleter(ws: Workspace): (value: string, context: { arguments: Record<string, string> }, ctx: RequestContext) => Promise<string[]> {
  return (value, _context, ctx) => completeRepository(ws, ctx, value);
}

/**
 * The repository when one is named or only one is available, else undefined: for prompts that
 * work without a repository too (git-commit with `changes`, explain-code with code).
 */
export async function optionalRepository(ws: Workspace, ctx: RequestContext, repo: string | undefined): Promise<GitRepository | undefined> {
  if (repo !== undefined && repo.trim() !== '') return ws.resolve(ctx, repo, 'repo');
  const roots = await ws.roots(ctx);
  if (roots.length === 0) return undefined;
  const listing = await ws.listFor(roots);
  return listing.length === 1 ? ws.resolve(ctx, undefined, 'repo') : undefined;
}
