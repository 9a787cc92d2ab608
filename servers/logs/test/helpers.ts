import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, makeTempDir, spawnServer, waitUntil, type SpawnedSession, type TestSession } from '@suite/test-kit';
import { runningScans } from '../src/scan-runner.js';
import { DEFAULT_JSON_FIELDS, DEFAULT_LIMITS, buildServer, type LogsConfig, type LogsLimits } from '../src/server.js';

export const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

/**
 * How a test's client reaches the server: in this process, or over stdio of the built bin (the
 * config then becomes the bin's command line). A describe block that runs `for each of TRANSPORTS`
 * proves the same behaviour both ways without a copy of the test.
 */
export type Transport = 'in-process' | 'stdio';
export const TRANSPORTS: readonly Transport[] = ['in-process', 'stdio'];

export interface Fixture {
  dir: string;
  transport: Transport;
  config: LogsConfig;
  /** The change hub the in-process sessions share (the server gets it beside its config). */
  changes: ChangeHub;
  /** A new session (in process, or a spawned bin); closed by close(). */
  connect(options?: Parameters<typeof connectInProcess>[1]): Promise<TestSession>;
  /** One session, connected on first use, for a test's helpers to share. */
  session(): Promise<TestSession>;
  /** Waits (up to `timeoutMs`, default 10 s) until a scan (search or statistics) is running in the session's server, or until none is. */
  scans(session: TestSession, state: 'running' | 'stopped', timeoutMs?: number): Promise<void>;
  file(name: string): string;
  write(name: string, text: string | Buffer): Promise<string>;
  writeGz(name: string, text: string): Promise<string>;
  close(): Promise<void>;
}

type JsonField = keyof LogsConfig['json'];
const JSON_FLAGS: Record<JsonField, string> = { time: '--json-time-field', level: '--json-level-field', message: '--json-message-field' };

/** The bin's command line for a config; a setting the command line cannot express fails the test. */
function commandLine(config: LogsConfig): string[] {
  const changed = (Object.keys(DEFAULT_LIMITS) as (keyof LogsLimits)[]).filter((k) => config.limits[k] !== DEFAULT_LIMITS[k]);
  if (changed.length > 0) throw new Error(`limits (${changed.join(', ')}) have no command-line flag: run this test in-process only`);
  const args: string[] = [];
  for (const field of Object.keys(JSON_FLAGS) as JsonField[]) {
    const names = config.json[field];
    if (names.join('\u0000') === DEFAULT_JSON_FIELDS[field].join('\u0000')) continue;
    if (names.length !== 1) throw new Error(`${JSON_FLAGS[field]} takes one field name`);
    args.push(JSON_FLAGS[field], names[0] as string);
  }
  if (config.entryPattern !== undefined) args.push('--entry-pattern', config.entryPattern);
  if (config.refuseHardLinks) args.push('--refuse-hard-links');
  for (const source of config.journals ?? []) args.push(...(source.kind === 'system' ? ['--journal'] : ['--journal-dir', source.directory]));
  return [...args, ...config.directories, ...config.files];
}

/** A temporary directory of logs, a config over it (or over `roots` inside it) and sessions over `transport`. */
export async function fixture(
  options: { transport?: Transport; roots?: (dir: string) => { directories?: string[]; files?: string[] }; limits?: Partial<LogsLimits>; config?: Partial<LogsConfig> } = {},
): Promise<Fixture> {
  const transport = options.transport ?? 'in-process';
  const { dir, cleanup } = await makeTempDir('suite-logs-');
  const roots = options.roots?.(dir) ?? { directories: [dir] };
  const changes = new ChangeHub();
  const config: LogsConfig = {
    directories: roots.directories ?? [],
    files: roots.files ?? [],
    aliases: [],
    json: DEFAULT_JSON_FIELDS,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    formatCache: new Map(),
    ...options.config,
  };
  const sessions: TestSession[] = [];
  let shared: Promise<TestSession> | undefined;
  const fx: Fixture = {
    dir,
    transport,
    config,
    changes,
    async connect(connectOptions) {
      const session = transport === 'stdio' ? await spawnServer(BIN, commandLine(config), connectOptions) : await connectInProcess(buildServer(config, { changes }), connectOptions);
      sessions.push(session);
      return session;
    },
    session() {
      shared ??= fx.connect();
      return shared;
    },
    async scans(session, state, timeoutMs = 10_000) {
      if (transport === 'in-process') {
        await waitUntil(() => runningScans() === (state === 'running' ? 1 : 0), { what: `a scan to be ${state}`, timeoutMs });
        return;
      }
      await cpuState((session as SpawnedSession).pid, state === 'running' ? 'busy' : 'idle', timeoutMs);
    },
    file: (name) => path.join(dir, name),
    async write(name, text) {
      const file = path.join(dir, name);
      await writeFile(file, text);
      return file;
    },
    async writeGz(name, text) {
      const file = path.join(dir, name);
      await writeFile(file, gzipSync(Buffer.from(text)));
      return file;
    },
    async close() {
      for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
      await changes.close();
      await cleanup();
    },
  };
  return fx;
}

let ticksPerSecond: number | undefined;

/** CPU time (ms) a process has used so far, its threads (the scan worker) included; from /proc (Linux). */
function cpuMs(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: the fields after the last ')' are fixed (utime, stime are 14th and 15th).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/**
 * What a spawned server's CPU use says about a scan: busy (a runaway regular expression keeps a
 * core going) or idle (the worker is gone). Measured over half-second windows until one matches:
 * busy is over 10% of a core (a 2-core machine running ten other jobs still gives a busy thread
 * more), idle under 5% (an idle server uses none: it waits on its stdin).
 */
async function cpuState(pid: number | undefined, want: 'busy' | 'idle', timeoutMs: number): Promise<void> {
  if (pid === undefined) throw new Error('the spawned server has no pid');
  const WINDOW_MS = 500;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const before = cpuMs(pid);
    const started = Date.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const share = (cpuMs(pid) - before) / (Date.now() - started);
    if (want === 'busy' ? share > 0.1 : share < 0.05) return;
    last = `${Math.round(share * 100)}% of a core`;
  }
  throw new Error(`the server did not become ${want} (last window: ${last})`);
}

/** ISO 8601 (UTC) for a time `minutesAgo` before now, to the millisecond. */
export function isoAgo(minutesAgo: number, now = Date.now()): string {
  return new Date(now - minutesAgo * 60_000).toISOString();
}

/** Lines with a trailing newline. */
export function lines(...ls: string[]): string {
  return ls.map((l) => `${l}\n`).join('');
}
