import { createRequire } from 'node:module';
import { SuiteServer, toolList, type AnyToolDefinition, type ChangeHub, type SessionInfo } from '@suite/shared';
import type { LogsConfig } from './config.js';
import { analyzeLogs } from './prompts/analyze-logs.js';
import { debugError } from './prompts/debug-error.js';
import { logFileTemplates } from './resources/log-files.js';
import { recentResources } from './resources/recent.js';
import { journalResources } from './journal/resources.js';
import { listLogs } from './tools/list-logs.js';
import { logStats } from './tools/log-stats.js';
import { readLogRange } from './tools/read-log-range.js';
import { readNewLines } from './tools/read-new-lines.js';
import { searchLogs } from './tools/search-logs.js';
import { tailLogTool } from './tools/tail-log.js';
import { viewerReadNewLines } from './tools/viewer-read-new-lines.js';
import { VIEWER_URI, viewerResource } from './resources/viewer.js';
import { visibleTool } from './terminal.js';

export type { JournalSource, LogsConfig, LogsLimits } from './config.js';
export { DEFAULT_LIMITS } from './config.js';
export { DEFAULT_JSON_FIELDS } from './formats/parsers.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

const INSTRUCTIONS = `Reads the log files in the allowed directories (and files named on the command line, with their rotated copies).
Start with list_logs. tail_log shows the end of a log (fast on any size); search_logs greps across logs, rotated and .gz copies
included, with level and time filters; log_stats counts entries per level over time and groups the most frequent errors;
read_log_range reads lines or a time range; read_new_lines follows a log like tail -f. Logs are also resources
(logs://file/<path>, filtered with ?level=&since=&grep=, and logs://recent?timeframe=1h) that can be subscribed to.
Started with --journal or --journal-dir, the systemd journal is a log too: logs://journal (every unit) and logs://journal/<unit>,
as a path for every tool and as a resource; its entries are JSON lines with the journal's fields (_SYSTEMD_UNIT, _PID, _BOOT_ID, …).`;

/** Every tool, built once per configuration and shared by all sessions; terminal controls in their answers shown as escapes. */
const tools = toolList<LogsConfig>(
  [listLogs, withViewer(tailLogTool), readLogRange, withViewer(searchLogs), withViewer(logStats), readNewLines, viewerReadNewLines].map(
    (make) => (config: LogsConfig) => visibleTool(make(config)),
  ),
);

/** A tool whose results the log viewer app shows (hosts without apps ignore it: the text answer is the same). */
function withViewer(make: (config: LogsConfig) => object): (config: LogsConfig) => AnyToolDefinition {
  return (config) => ({ ...(make(config) as AnyToolDefinition), app: { resourceUri: VIEWER_URI } });
}

/**
 * Resources and prompts, likewise built once per configuration: a session holds no definitions of
 * its own. Each prompt keeps its own argument type, so each is registered by its own closure.
 */
const registrations = new WeakMap<LogsConfig, ((server: SuiteServer) => void)[]>();
function registrationsOf(config: LogsConfig): ((server: SuiteServer) => void)[] {
  let built = registrations.get(config);
  if (!built) {
    const recent = recentResources(config);
    const analyze = analyzeLogs(config);
    const debug = debugError(config);
    const viewer = viewerResource();
    built = [
      ...logFileTemplates(config).map((template) => (server: SuiteServer) => void server.resourceTemplate(template)),
      (server) => void server.resource(recent.resource),
      (server) => void server.resourceTemplate(recent.template),
      (server) => void server.prompt(analyze),
      (server) => void server.prompt(debug),
      (server) => void server.resource(viewer),
    ];
    if ((config.journals ?? []).length > 0) {
      const journal = journalResources(config);
      built.push((server) => void server.resource(journal.resource), (server) => void server.resourceTemplate(journal.template));
    }
    registrations.set(config, built);
  }
  return built;
}

export interface ServerOptions {
  session?: SessionInfo;
  /** The process-wide change hub: enables resources/subscribe and the listing's list_changed. */
  changes?: ChangeHub;
}

/** Builds the server for one session: it only assembles; each feature lives in its own file. */
export function buildServer(config: LogsConfig, options: ServerOptions = {}): SuiteServer {
  const { session, changes } = options;
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: INSTRUCTIONS,
    roots: { directories: [...config.directories, ...config.files], aliases: config.aliases },
    ...(changes ? { changes } : {}),
    ...(session ? { session } : {}),
  });
  server.tools(tools(config));
  for (const register of registrationsOf(config)) register(server);
  return server;
}
