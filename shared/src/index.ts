export {
  runServer,
  integerFlag,
  listValue,
  helpText,
  UsageError,
  type FlagSpec,
  type FlagValues,
  type PreparedServer,
  type HttpServiceInfo,
  type ServerCliSpec,
  type WritePosture,
} from './cli/cli.js';
export { RequestStateSeal, configureRequestState } from './server/input-requests.js';
export { SuiteServer, type SuiteServerOptions, type ListKind } from './server/server.js';
export { TaskRuntime, configureTasks, processTasks, TASKS_EXTENSION, type TaskRuntimeOptions } from './tasks/runtime.js';
export { MemoryTaskStore, type TaskStore, type TaskRecord, type TaskStatus } from './tasks/store.js';
export type {
  AuthInfo,
  SessionInfo,
  RequestContext,
  ChangeAnnouncer,
  ClientFeatures,
  SamplingMessage,
  SamplingRequest,
  SamplingResult,
  ElicitRequest,
  ElicitUrlRequest,
  ElicitResult,
  ContentBlock,
  TextContent,
  ImageContent,
  AudioContent,
  EmbeddedResourceContent,
  ResourceLinkContent,
} from './server/context.js';
export { ToolError, UpstreamError, ERROR_CODES, type ToolErrorKind } from './core/errors.js';
export { errorResult, describeZodError, type ToolAnnotations, toolList, defineTool, type ToolDefinition, type AnyToolDefinition, type ToolFactory, type ToolReply, type CallToolResult } from './server/tools.js';
export { ToolGate, type ToolsetInfo, type ToolSelection } from './server/toolsets.js';
export { namedTargetTools, toolsForNamedTargets, type NamedTargets, type NamedTargetTools } from './server/named-targets.js';
export type {
  ResourceContents,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ResourceListing,
  ResourceAnnotations,
  TemplateVariables,
  PromptDefinition,
  PromptMessage,
  Completer,
} from './server/resources.js';
export { RootsManager, resolveCliDirectories, intersectTrees, type Root, type RootsSnapshot } from './files/roots.js';
export { PathGuard, isInside, noRootsMessage, type ResolvedPath } from './files/paths.js';
export { FileChangedError, currentVersion, sameVersion, versionOf, type FileVersion } from './files/file-version.js';
export { withWriteLock, DEFAULT_LOCK_WAIT_MS, type WriteLockOptions } from './files/write-locks.js';
export {
  HOST_TAG,
  isSuiteTempName,
  journalTempDirectory,
  newTempEntry,
  suiteStateDirectory,
  sweepJournaledTempFiles,
  sweepTempFiles,
  tempJournalDirectories,
  tempJournalUsable,
  tempName,
  trackTempEntry,
  type JournalSweepOptions,
  type JournalSweepResult,
  type SweepOptions,
  type SweepResult,
} from './files/temp-files.js';
export {
  ChangeHub,
  fileSignature,
  type ChangeContext,
  type ChangeSetup,
  type ChangeSource,
  type ChangeSink,
  type ChangeHubOptions,
  type WatchFault,
} from './changes/subscriptions.js';
export { Logger, LOG_LEVELS, isLogLevel, newErrorId, type LogLevel } from './core/logging.js';
export { SecretScope, registerSecret, redactSecrets, REDACTED } from './core/secrets.js';
export { countOf, formatBytes } from './text/sizes.js';
export { escapeTerminalControls, escapeTerminalControlsInLine, hasTerminalControls } from './text/terminal-text.js';
export { mimeTypeFor, isTextMimeType, isProbablyText, OCTET_STREAM } from './files/mime.js';
export { ProgressReporter, CancelledError, throwIfCancelled } from './core/progress.js';
export { TimeBudget } from './process/time-budget.js';
export { encodeCursor, decodeCursor, paginate, type Page } from './server/pagination.js';
export { nestedQuantifier } from './text/regex-safety.js';
export { ProtocolError } from './server/protocol-errors.js';
export { ConcurrencyLimit } from './process/concurrency.js';
export { MemorySharedLimits, sharedLimits, setProcessSharedLimits, type SharedLimits, type KnownLimit } from './replicas/shared-limits.js';
export {
  runProcess,
  processCounts,
  MAX_CONCURRENT_PROCESSES,
  spawnManaged,
  terminateAllProcesses,
  childGuardPid,
  type RunProcessOptions,
  type ProcessResult,
  type ManagedProcess,
  type ManagedProcessOptions,
  type ManagedExit,
  type ChildEnvironmentOptions,
} from './process/process.js';
export { serveStdio, serveHttp, type HttpOptions, type RunningHttp, type SessionFactory, type Authenticator, type HttpRoute } from './transports/serve.js';
export { StdioTransport, DEFAULT_MAX_MESSAGE_BYTES, type StdioTransportOptions } from './transports/stdio.js';
export {
  ByteFinder,
  requiredLiteral,
  lineFinder,
  nextLineWith,
  lineText,
  countNewlines,
  scanBuffer,
  simdNewlineCount,
  WorkerPool,
  type LineSpan,
  type WorkerPoolOptions,
} from './search/index.js';
export {
  APPS_EXTENSION_ID,
  APP_MIME_TYPE,
  APP_CSP,
  LEGACY_RESOURCE_URI_KEY,
  clientSupportsApps,
  isAppOnly,
  toolAppMeta,
  type ToolApp,
  type AppVisibility,
} from './apps/meta.js';
export { appResource, packageRoot, APPS_DIR, type AppResourceOptions } from './apps/resource.js';
export {
  SCHEMA_PAGE_ARGS,
  SCHEMA_PAGE_OUTPUT,
  SCHEMA_PAGE_TABLES,
  SCHEMA_TABLE,
  schemaPage,
  type SchemaColumn,
  type SchemaForeignKey,
  type SchemaPage,
  type SchemaTable,
} from './apps/schema.js';
export { schemaViewResource, schemaViewUri } from './apps/schema-view.js';
export { withApps } from './apps/attach.js';
// What a server's handlers need of OAuth mode without loading the token verifier or Redis (those stay in ./auth).
export { oauthGrantOf, type OAuthGrant, type Principal } from './auth/principal.js';
export { SecretStoreUnavailable, type SecretStore } from './auth/secret-store.js';
