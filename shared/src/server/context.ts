import type { Logger } from '../core/logging.js';
import type { PathGuard } from '../files/paths.js';
import type { ProgressReporter } from '../core/progress.js';
import type { RootsSnapshot } from '../files/roots.js';
import type { SecretScope } from '../core/secrets.js';

/**
 * Who a session (or a request) acts for, as the transport established it: over HTTP, the bearer
 * token the client presented (checked by the server's authenticator); over stdio, nothing.
 */
export interface AuthInfo {
  /** The bearer token as presented. Registered as a secret of its session: never logged, never shown. */
  token: string;
  clientId?: string;
  scopes?: string[];
  /** Seconds since the epoch. */
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/** What a session factory learns about the session it builds a server for. */
/** Our AuthInfo from the SDK's (which always carries clientId and scopes, empty when unknown). */
export function authFrom(info: { token: string; clientId?: string; scopes?: string[]; expiresAt?: number; extra?: Record<string, unknown> }): AuthInfo {
  return {
    token: info.token,
    ...(info.clientId ? { clientId: info.clientId } : {}),
    ...(info.scopes ? { scopes: info.scopes } : {}),
    ...(info.expiresAt !== undefined ? { expiresAt: info.expiresAt } : {}),
    ...(info.extra ? { extra: info.extra } : {}),
  };
}

export interface SessionInfo {
  /** The session's one identity: the Mcp-Session-Id over HTTP, a fresh UUID otherwise. */
  id: string;
  transport: 'stdio' | 'http' | 'sse' | 'memory';
  auth?: AuthInfo;
  /**
   * Over HTTP, the headers of the request that opened the session (names in lower case;
   * Authorization, Proxy-Authorization and Cookie left out), for choices a client makes for its
   * session by header (which tools it wants, for instance).
   */
  headers?: Readonly<Record<string, string>>;
}

export type TextContent = { type: 'text'; text: string };
export type ImageContent = { type: 'image'; data: string; mimeType: string };
export type AudioContent = { type: 'audio'; data: string; mimeType: string };
export type ResourceContents = ({ uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string }) & { _meta?: Record<string, unknown> };
export type EmbeddedResourceContent = { type: 'resource'; resource: ResourceContents };
export type ResourceLinkContent = { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string };
export type ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResourceContent | ResourceLinkContent;

/** One message of a sampling conversation. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  content: TextContent | ImageContent | AudioContent;
}

/** What the server asks the client's model for (`sampling/createMessage`). */
export interface SamplingRequest {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  /** Hints at the kind of model; the client decides. Priorities are between 0 and 1. */
  modelPreferences?: {
    hints?: { name?: string }[];
    costPriority?: number;
    speedPriority?: number;
    intelligencePriority?: number;
  };
  temperature?: number;
  stopSequences?: string[];
  includeContext?: 'none' | 'thisServer' | 'allServers';
  metadata?: Record<string, unknown>;
}

export interface SamplingResult {
  role: 'user' | 'assistant';
  content: TextContent | ImageContent | AudioContent;
  model: string;
  stopReason?: string;
  /** The text of the answer ('' when the model answered with an image or audio). */
  text: string;
}

export interface ElicitRequest {
  message: string;
  /** A flat JSON Schema object of primitive properties, as the spec allows. */
  requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
}

/**
 * A URL-mode elicitation (2025-11-25): the client shows the user a URL to visit out of band (a
 * third party's sign-in, a payment page); nothing the user types there passes through the client.
 */
export interface ElicitUrlRequest {
  message: string;
  url: string;
  /** Names this elicitation (2025-11-25 era); the 2026-07-28 era has no such id. */
  elicitationId: string;
}

export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/**
 * Client-side features. A call the client did not declare the capability for fails with a
 * ToolError (unavailable) in a 2025 session, and ends a 2026-07-28 request with -32021
 * (MissingRequiredClientCapabilityError, HTTP 400) as that revision requires; check the flag
 * first to do without.
 */
export interface ClientFeatures {
  sampling: boolean;
  elicitation: boolean;
  /** The client takes URL-mode elicitation (declared `elicitation.url`). */
  elicitationUrl: boolean;
  roots: boolean;
  /** The client renders MCP Apps (`io.modelcontextprotocol/ui` with `text/html;profile=mcp-app`): decided per request. */
  apps: boolean;
  /**
   * Asks the client's model. Cancelled with the request (`ctx.signal`); `timeoutMs` (default 120 s)
   * bounds the wait for a human to approve it. Failures are ToolErrors: unavailable (no sampling),
   * timeout, or failed (the client or user declined).
   */
  createMessage(request: SamplingRequest, options?: { timeoutMs?: number }): Promise<SamplingResult>;
  /** Asks the user through the client (`elicitation/create`), with the same cancellation and timeout. */
  elicit(request: ElicitRequest, options?: { timeoutMs?: number }): Promise<ElicitResult>;
  /**
   * Asks the user to visit a URL (URL-mode elicitation; `input_required` in 2026-07-28). `accept`
   * means the user agreed to open it, not that they finished there: the handler learns that its own way.
   */
  elicitUrl(request: ElicitUrlRequest, options?: { timeoutMs?: number }): Promise<ElicitResult>;
}

/**
 * How a handler announces what it changed, through the process's change hub (`SuiteServer`'s
 * `changes`), so that no server hands the hub around in its configuration.
 */
export interface ChangeAnnouncer {
  /** The resource at `uri` changed: every session subscribed to it hears `notifications/resources/updated` (debounced). */
  resourceUpdated(uri: string): void;
  /**
   * The resource list changed for everyone (a table created, a file added): every session hears
   * `notifications/resources/list_changed` (debounced). Without a hub, this session only.
   */
  resourceListChanged(): void;
  /**
   * Follows directory trees (to `depth`) for entries appearing and disappearing, and announces the
   * resource list change to every session. Held by this session under `key` (sessions share one
   * watcher per key) until `unwatchListing(key)` or the session ends. Without a hub, does nothing.
   */
  watchListing(key: string, dirs: readonly string[], options?: { depth?: number; ignored?: (path: string, stats?: { isFile(): boolean }) => boolean }): Promise<void>;
  unwatchListing(key: string): Promise<void>;
}

/** Per-request context handed to every tool, resource, prompt and completion handler. */
export interface RequestContext {
  /** Fires on `notifications/cancelled` (and when the session closes). */
  signal: AbortSignal;
  /** Reports `notifications/progress` when the request carried a progress token. */
  progress: ProgressReporter;
  /** Logs to stderr and to this session's client, with this session's secrets redacted. */
  log: Logger;
  sessionId: string;
  /** The credentials this request came with (HTTP bearer token), else the session's; undefined over stdio. */
  auth: AuthInfo | undefined;
  /** This session's secrets: register a value here and it is redacted from its logs and errors until the session ends. */
  secrets: SecretScope;
  /** The effective roots, after the first client answer (bounded wait). */
  roots(): Promise<RootsSnapshot>;
  /**
   * The path guard over the effective file roots. Throws a ToolError that tells the user how
   * to configure access when no directory is allowed.
   */
  paths(): Promise<PathGuard>;
  client: ClientFeatures;
  /**
   * Reads a resource of this server by URI (through its registered resource or template, with
   * the same checks as `resources/read`) and returns it as embedded content for a prompt message
   * or a tool result: the client can show it and fetch it again.
   */
  embedResource(uri: string): Promise<EmbeddedResourceContent[]>;
  /** Announces what this request changed (resources updated, the resource list). */
  changes: ChangeAnnouncer;
}
