import type { z } from 'zod';
import type { AnyToolDefinition, ContentBlock, ToolAnnotations, ToolDefinition } from '@suite/shared';
import type { GithubLimits, ToolsetName } from './config.js';
import type { GithubCall, GithubSession } from './github-session.js';
import { clip } from './present.js';

/** What a GitHub tool answers: text, or content blocks (a resource link for a large file). */
export type GithubReply = string | { content: ContentBlock[] };

/** A GitHub tool as declared in its file: the schema and a handler that gets a ready GithubCall. */
export interface GithubToolSpec<I extends z.ZodObject> {
  name: string;
  toolset: ToolsetName;
  /** One or two sentences for the model: what it does and what it returns. */
  description: string;
  input: I;
  /** Earlier names of its own arguments (the archived server's, this server's before 0.2), beyond the common ones. */
  aliases?: Readonly<Record<string, string>>;
  /** Every GitHub tool reaches the outside world, so openWorldHint is always true and set here. */
  annotations: Omit<ToolAnnotations, 'openWorldHint'>;
  /** The fine-grained token permission the tool needs ("Issues: write"), named when GitHub answers 403. */
  permission: string;
  /** The classic token scope it needs, when not `repo` (which covers every repository tool): `notifications`, `none`. */
  scope?: ClassicScope;
  /** The answer's size cap when it is not limits.maxOutputChars (a file the tool already bounded). */
  outputLimit?: (limits: GithubLimits) => number;
  /** Fetches many pages or logs: a task for 2026-07-28 clients with the tasks extension when it runs past --task-after-ms. */
  longRunning?: boolean;
  run(args: z.output<I>, call: GithubCall): Promise<GithubReply>;
}

/** Classic (OAuth) token scopes the tools need; `none`: any token, or none for public data. */
export type ClassicScope = 'repo' | 'notifications' | 'security_events' | 'none';

/** What a tool needs of a token, as its definition declares it: in tools/list (`_meta`), the README table and --check-token. */
export interface ToolAccess {
  name: string;
  toolset: ToolsetName;
  readOnly: boolean;
  /** The fine-grained permission ("Actions: read"). */
  permission: string;
  /** The classic scope. */
  scope: ClassicScope;
}

/** The `_meta` key under which each tool's permissions are published. */
export const PERMISSIONS_META_KEY = 'io.github.suite/permissions';

/** A tool bound to a session when the server for that session is built, with what it needs of a token. */
export type GithubTool = ((session: GithubSession) => AnyToolDefinition) & { access: ToolAccess };

/** The answer with what the request layer noted (a redirect to another repository), first, so that a cut cannot drop it. */
function withNotes(reply: GithubReply, notes: readonly string[]): GithubReply {
  if (notes.length === 0) return reply;
  const text = notes.join('\n');
  if (typeof reply === 'string') return `${text}\n${reply}`;
  return { content: [{ type: 'text', text }, ...reply.content] };
}

function capReply(reply: GithubReply, max: number): { text: string } | { content: ContentBlock[] } {
  if (typeof reply === 'string') return { text: clip(reply, max) };
  return { content: reply.content.map((block) => (block.type === 'text' ? { type: 'text', text: clip(block.text, max) } : block)) };
}

/**
 * Names that meant the same in the archived server or in this server's first release: per_page was
 * perPage there (in two of the archived tools and here), a search's q was query.
 */
const COMMON_ALIASES: Readonly<Record<string, string>> = { perPage: 'per_page', query: 'q' };

function aliasesOf(spec: GithubToolSpec<z.ZodObject>): Record<string, string> {
  const published = new Set(Object.keys(spec.input.shape));
  const common = Object.entries(COMMON_ALIASES).filter(([, name]) => published.has(name));
  return { ...Object.fromEntries(common), ...spec.aliases };
}

/**
 * Declares a GitHub tool. Everything cross-cutting happens here and in GithubSession.run, once for
 * every tool: the token of the request, cancellation and the time budget, the repository
 * allowlist (in the request hook), error mapping, and the size cap of the answer.
 */
export function githubTool<I extends z.ZodObject>(spec: GithubToolSpec<I>): GithubTool {
  const access: ToolAccess = { name: spec.name, toolset: spec.toolset, readOnly: spec.annotations.readOnlyHint === true, permission: spec.permission, scope: spec.scope ?? 'repo' };
  const make = (session: GithubSession): AnyToolDefinition => {
    const definition: ToolDefinition<I> = {
      name: spec.name,
      toolset: spec.toolset,
      description: spec.description,
      input: spec.input,
      aliases: aliasesOf(spec),
      annotations: { ...spec.annotations, openWorldHint: true },
      ...(spec.longRunning ? { longRunning: true } : {}),
      meta: { [PERMISSIONS_META_KEY]: { fineGrained: access.permission, classic: access.scope } },
      handler: async (args, ctx) => {
        const notes: string[] = [];
        const reply = await session.run(ctx, spec.permission, (call) => spec.run(args, call), notes, access.scope);
        return capReply(withNotes(reply, notes), spec.outputLimit?.(session.config.limits) ?? session.config.limits.maxOutputChars);
      },
    };
    return definition;
  };
  return Object.assign(make, { access });
}
