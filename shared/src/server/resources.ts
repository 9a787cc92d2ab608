import type { z } from 'zod';
import type { ContentBlock, RequestContext, ResourceContents } from './context.js';
import type { ChangeContext, ChangeSource } from '../changes/subscriptions.js';

export type { ResourceContents };

/** Hints for the client about a listed resource (MCP `Annotations`). */
export interface ResourceAnnotations {
  audience?: ('user' | 'assistant')[];
  /** 0 (least important) to 1 (most). */
  priority?: number;
  /** When the resource last changed, ISO 8601 with a zone (`Date#toISOString()`); since protocol revision 2025-06-18. */
  lastModified?: string;
}

/** One entry of resources/list. */
export interface ResourceListing {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: ResourceAnnotations;
  /** Extension metadata, e.g. an MCP App's `ui` (its CSP). */
  _meta?: Record<string, unknown>;
}

/** Completes one argument: `value` is what the user typed so far (percent-decoded for template variables). */
export type Completer = (value: string, context: { arguments: Record<string, string> }, ctx: RequestContext) => Promise<string[]> | string[];

/** A resource with a fixed URI. */
export interface ResourceDefinition {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Extension metadata shown in resources/list, e.g. an MCP App's `ui` (see `appResource`). */
  _meta?: Record<string, unknown>;
  read(ctx: RequestContext): Promise<ResourceContents | ResourceContents[]>;
  /**
   * What to follow while someone is subscribed (paths, trees, a poll); omit for resources that never
   * change. A source that hears of changes itself (a LISTEN channel) calls `change.publish()`.
   */
  subscribe?(ctx: RequestContext, change: ChangeContext): Promise<ChangeSource | undefined>;
}

/**
 * Template variables, percent-decoded (a table named "a b" arrives as "a b", whether the URI
 * spelled it "a%20b" or not). A value that is not valid percent-encoding arrives as written.
 * Exploded or list variables arrive joined with "/".
 */
export type TemplateVariables = Record<string, string>;

/** A family of resources under an RFC 6570 URI template, e.g. `file://{+path}`. */
export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  read(uri: string, variables: TemplateVariables, ctx: RequestContext): Promise<ResourceContents | ResourceContents[]>;
  /** Lists concrete resources for resources/list, one page at a time (cursor is this template's own). */
  list?(cursor: string | undefined, ctx: RequestContext): Promise<{ resources: ResourceListing[]; nextCursor?: string }>;
  /** Completion for template variables (`completion/complete` with `ref/resource`). */
  complete?: Record<string, Completer>;
  /** As for a fixed resource: what to follow for this URI while someone is subscribed. */
  subscribe?(uri: string, variables: TemplateVariables, ctx: RequestContext, change: ChangeContext): Promise<ChangeSource | undefined>;
}

/** One message of a prompt; embed a resource of this server with `ctx.embedResource(uri)`. */
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

export interface PromptDefinition<A extends z.ZodObject = z.ZodObject> {
  name: string;
  title?: string;
  description: string;
  /** Prompt arguments are strings on the wire; describe each with `.describe()`. */
  args: A;
  complete?: Partial<Record<keyof z.output<A> & string, Completer>>;
  get(args: z.output<A>, ctx: RequestContext): Promise<{ description?: string; messages: PromptMessage[] }>;
}
