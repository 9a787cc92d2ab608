export { runServer, integerFlag, helpText, UsageError, type FlagSpec, type FlagValues, type PreparedServer, type ServerCliSpec } from './cli.js';
export { SuiteServer, type SuiteServerOptions } from './server.js';
export {
  ToolError,
  errorResult,
  describeZodError,
  type ToolAnnotations,
  type ToolDefinition,
  type ToolReply,
  type ToolErrorKind,
  type RequestContext,
  type ClientFeatures,
  type ContentBlock,
  type CallToolResult,
} from './tools.js';
export type {
  ResourceContents,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ResourceListing,
  TemplateVariables,
  PromptDefinition,
  PromptMessage,
  Completer,
} from './resources.js';
export { RootsManager, resolveCliDirectories, intersectTrees, type Root, type RootsSnapshot } from './roots.js';
export { PathGuard, isInside, noRootsMessage, type ResolvedPath } from './paths.js';
export { FileChangedError, currentVersion, sameVersion, versionOf, type FileVersion } from './file-version.js';
export { withWriteLock, DEFAULT_LOCK_WAIT_MS, type WriteLockOptions } from './write-locks.js';
export { isSuiteTempName, tempName, trackTempEntry, sweepTempFiles, type SweepOptions, type SweepResult } from './temp-files.js';
export { ChangeHub, type ChangeSource, type ChangeSink, type ChangeHubOptions } from './subscriptions.js';
export { Logger, LOG_LEVELS, isLogLevel, newErrorId, registerSecret, redactSecrets, type LogLevel } from './logging.js';
export { ProgressReporter, CancelledError, throwIfCancelled } from './progress.js';
export { TimeBudget } from './time-budget.js';
export { encodeCursor, decodeCursor, paginate, type Page } from './pagination.js';
export { ProtocolError } from './protocol-errors.js';
export { serveStdio, serveHttp, type HttpOptions, type RunningHttp, type SessionFactory } from './transport.js';
export { StdioTransport, DEFAULT_MAX_MESSAGE_BYTES, type StdioTransportOptions } from './stdio.js';
