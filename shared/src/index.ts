export {
  runServer,
  integerFlag,
  listValue,
  helpText,
  UsageError,
  type FlagSpec,
  type FlagValues,
  type PreparedServer,
  type ServerCliSpec,
  type WritePosture,
} from './cli.js';
export { SuiteServer, type SuiteServerOptions, type ListKind } from './server.js';
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
  ElicitResult,
  ContentBlock,
  TextContent,
  ImageContent,
  AudioContent,
  EmbeddedResourceContent,
  ResourceLinkContent,
} from './context.js';
export { ToolError, UpstreamError, ERROR_CODES, type ToolErrorKind } from './errors.js';
export { errorResult, describeZodError, type ToolAnnotations, toolList, defineTool, type ToolDefinition, type AnyToolDefinition, type ToolFactory, type ToolReply, type CallToolResult } from './tools.js';
export { ToolGate, type ToolsetInfo, type ToolSelection } from './toolsets.js';
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
} from './resources.js';
export { RootsManager, resolveCliDirectories, intersectTrees, type Root, type RootsSnapshot } from './roots.js';
export { PathGuard, isInside, noRootsMessage, type ResolvedPath } from './paths.js';
export { FileChangedError, currentVersion, sameVersion, versionOf, type FileVersion } from './file-version.js';
export { withWriteLock, DEFAULT_LOCK_WAIT_MS, type WriteLockOptions } from './write-locks.js';
export { isSuiteTempName, tempName, trackTempEntry, sweepTempFiles, type SweepOptions, type SweepResult } from './temp-files.js';
export {
  ChangeHub,
  fileSignature,
  type ChangeContext,
  type ChangeSetup,
  type ChangeSource,
  type ChangeSink,
  type ChangeHubOptions,
  type WatchFault,
} from './subscriptions.js';
export { Logger, LOG_LEVELS, isLogLevel, newErrorId, type LogLevel } from './logging.js';
export { SecretScope, registerSecret, redactSecrets, REDACTED } from './secrets.js';
export { formatBytes } from './sizes.js';
export { escapeTerminalControls, escapeTerminalControlsInLine, hasTerminalControls } from './terminal-text.js';
export { mimeTypeFor, isTextMimeType, isProbablyText, OCTET_STREAM } from './mime.js';
export { ProgressReporter, CancelledError, throwIfCancelled } from './progress.js';
export { TimeBudget } from './time-budget.js';
export { encodeCursor, decodeCursor, paginate, type Page } from './pagination.js';
export { nestedQuantifier } from './regex-safety.js';
export { ProtocolError } from './protocol-errors.js';
export { ConcurrencyLimit } from './concurrency.js';
export {
  runProcess,
  processCounts,
  MAX_CONCURRENT_PROCESSES,
  spawnManaged,
  terminateAllProcesses,
  type RunProcessOptions,
  type ProcessResult,
  type ManagedProcess,
  type ManagedProcessOptions,
  type ManagedExit,
  type ChildEnvironmentOptions,
} from './process.js';
export { serveStdio, serveHttp, type HttpOptions, type RunningHttp, type SessionFactory, type Authenticator } from './transport.js';
export { StdioTransport, DEFAULT_MAX_MESSAGE_BYTES, type StdioTransportOptions } from './stdio.js';
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
