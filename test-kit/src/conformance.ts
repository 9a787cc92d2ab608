/**
 * What the abuse kit and the fuzzer need to know about a server, and the tools both use to talk to
 * its built bin: a raw stdio client that can send what the SDK client never would, an HTTP
 * start-up that finds the bound port, peak memory, and the checks every answer must pass (no stack
 * trace, no path of this machine the user did not give).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { isSuiteTempName } from '@suite/shared';
import type { TestSession } from './testing.js';

/** One tools/call. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * A server as the abuse kit and the fuzzer run it. One per server, in
 * `servers/<name>/test/conformance-target.ts`; both kits call `prepare` once per test file.
 */
export interface ConformanceTarget {
  /** Shown in test names and in the printed summary. */
  name: string;
  /** The built bin, `servers/<name>/dist/index.js`. */
  bin: string;
  /** Builds the world the server runs against: temporary directories, a database, a fake upstream. */
  prepare(): Promise<PreparedTarget>;
}

export interface PreparedTarget {
  /** The bin's arguments over stdio, with the tools that write on wherever the sandbox allows them. */
  args: string[];
  /** Added to the test's environment; a variable set to undefined is removed. */
  env?: Record<string, string | undefined>;
  /** A cheap read-only call that succeeds: the health check after every probe and the load of the concurrency probe. */
  cheapCall: ToolCall;
  /**
   * Real paths the server may name in its answers (its roots, the directory of its database file).
   * Any other absolute path of this machine in an answer is a leak, unless the call itself gave it.
   */
  allowedPaths: string[];
  /** Values no answer and no log line may contain (a database password, a token): redaction is checked too. */
  secrets?: string[];
  /** Strings the fuzzer mixes into generated ones, so that cases get past validation: fixture names, paths in the sandbox, SQL. */
  samples?: string[];
  /** Values the fuzzer uses often for arguments of these names (`owner: ['acme']`, `issue_number: [1, 2]`). */
  namedSamples?: Record<string, unknown[]>;
  /** What the SIGTERM probe sends before the signal, and how it checks that nothing was left half-written. */
  inFlight?: InFlightWork;
  /** HTTP mode. Default: one `--auth-token` gate, which the kit sets. */
  http?: { auth: 'gate' } | { auth: 'per-session'; token: string };
  /** The fuzzer's settings for this server. */
  fuzz?: FuzzSettings;
  /** A resource the server follows and how to change it: the eras suite's subscription tests (`erasSuite(target, { follows: true })`). */
  followed?: FollowedResource;
  /** Releases what `prepare` made. */
  cleanup(): Promise<void>;
}

/** A followed resource, for the class test of "a change made right after the acknowledgement is delivered". */
export interface FollowedResource {
  uri: string;
  /**
   * Changes the resource the way the world does (a file written, a log appended, a row written by
   * another process, a NOTIFY, a ref moved); `round` makes each change differ from the last.
   */
  change(round: number): Promise<void>;
  /** URIs the server must refuse to follow: outside its roots, unknown tables or repositories, unknown schemes. */
  refused: string[];
}

export interface InFlightWork {
  /** Sent all at once; the signal follows the first answer. */
  calls: ToolCall[];
  /**
   * Where the server writes: after the signal, none of these holds a temporary file of the suite,
   * at any depth. Defaults to `allowedPaths`.
   */
  directories?: string[];
  /**
   * The target's own check once the process has exited: every output either absent or complete,
   * a database intact. `answered[i]` is the answer call i received before the exit, if any.
   */
  check?(answered: (RawMessage | undefined)[]): Promise<void>;
}

export interface FuzzSettings {
  /**
   * Cases per tool in a normal run (default 100; SUITE_FUZZ_RUNS overrides it). Chosen per server so
   * the run stays well under a minute.
   */
  numRuns?: number;
  /**
   * Where the fuzzer sends its calls. Default: the built bin over stdio. A server whose bin spaces
   * out requests on purpose (GitHub's secondary rate limits) gives an in-process session with the
   * spacing shrunk; uncaught exceptions and unhandled rejections are then what counts as a crash.
   */
  connect?: () => Promise<TestSession>;
  /** Per-call time limit in ms (default 20000): a call that takes longer is a finding. */
  callTimeoutMs?: number;
  /** Puts the sandbox back before each tool's run: a destructive tool may have emptied it for the next. */
  reset?(): Promise<void>;
}

/** A JSON-RPC message as it came off the wire. */
export interface RawMessage {
  jsonrpc?: unknown;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown> & { content?: { type: string; text?: string }[]; isError?: boolean; tools?: RawTool[] };
  error?: { code: number; message: string; data?: unknown };
}

/** A tool as tools/list describes it. */
export interface RawTool {
  name: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when the process was seen to exit. */
  at: number;
}

const PROTOCOL_VERSION = '2025-06-18';

export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...process.env, ...extra }).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * A server bin on stdio, driven line by line: raw text and malformed messages, thousands of
 * requests in flight, signals, stdin closed. Responses are matched to requests by id; whatever
 * else arrives is kept in `messages`.
 */
export class RawStdioServer {
  readonly messages: RawMessage[] = [];
  /** Lines on stdout that were not JSON: stdout must carry protocol messages only. */
  readonly garbage: string[] = [];
  readonly exited: Promise<Exit>;
  private stderrText = '';
  private buffered = '';
  private nextId = 1;
  private exit: Exit | undefined;
  private readonly pending = new Map<string | number, { resolve: (m: RawMessage) => void; reject: (e: Error) => void }>();

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => this.onData(text));
    child.stderr.on('data', (chunk: Buffer) => {
      // Enough to diagnose a failure without holding a chatty server's whole log.
      if (this.stderrText.length < 1024 * 1024) this.stderrText += chunk.toString('utf8');
    });
    // A server that exits while we still write gets EPIPE on our side; the exit is what the probes look at.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exit = { code, signal, at: performance.now() };
        for (const [id, waiter] of this.pending) waiter.reject(new Error(`the server exited (code ${code}, signal ${signal}) before answering request ${id}`));
        this.pending.clear();
        resolve(this.exit);
      }),
    );
  }

  /** Wraps a child spawned elsewhere (an HTTP-mode server, whose stdio carries no protocol). */
  static adopt(child: ChildProcessWithoutNullStreams): RawStdioServer {
    return new RawStdioServer(child);
  }

  /** Spawns `node bin ...args` and completes the initialize handshake. */
  static async start(bin: string, args: string[], env?: Record<string, string | undefined>): Promise<RawStdioServer> {
    const server = new RawStdioServer(spawn(process.execPath, [bin, ...args], { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }));
    const init = await server.request('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'suite-abuse-kit', version: '0.0.0' } }, 30_000);
    if (init.error) throw new Error(`initialize failed: ${init.error.message}\n${server.stderr()}`);
    server.notify('notifications/initialized');
    return server;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  stderr(): string {
    return this.stderrText;
  }

  private onData(text: string): void {
    this.buffered += text;
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) !== -1) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      if (line.trim() === '') continue;
      let message: RawMessage;
      try {
        message = JSON.parse(line) as RawMessage;
      } catch {
        this.garbage.push(line.slice(0, 500));
        continue;
      }
      this.onMessage(message);
    }
  }

  private onMessage(message: RawMessage): void {
    if (message.method !== undefined && message.id !== undefined && message.id !== null) {
      // A request of the server's own (ping): answer it, as a client must.
      const answer = message.method === 'ping' ? { result: {} } : { error: { code: -32601, message: 'Method not found' } };
      this.send({ jsonrpc: '2.0', id: message.id, ...answer });
      return;
    }
    const waiter = message.id !== undefined && message.id !== null ? this.pending.get(message.id) : undefined;
    if (waiter && message.id !== undefined && message.id !== null) {
      this.pending.delete(message.id);
      waiter.resolve(message);
      return;
    }
    this.messages.push(message);
  }

  /** Writes text as it is: the caller adds the newline, or not. */
  write(text: string): void {
    if (!this.hasExited) this.child.stdin.write(text);
  }

  send(message: unknown): void {
    this.write(`${JSON.stringify(message)}\n`);
  }

  notify(method: string, params?: Record<string, unknown>): void {
    this.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
  }

  /** Sends a request and resolves with its answer (result or error). */
  request(method: string, params?: Record<string, unknown>, timeoutMs = 30_000): Promise<RawMessage> {
    const id = `k${this.nextId++}`;
    return this.expect(id, () => this.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }), timeoutMs);
  }

  /** Resolves with the answer to `id`, which `send` (run now) writes in whatever raw form it likes. */
  expect(id: string | number, send: () => void | Promise<void>, timeoutMs = 30_000): Promise<RawMessage> {
    if (this.hasExited) return Promise.reject(new Error(`the server has exited; cannot send request ${id}`));
    return new Promise<RawMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to request ${JSON.stringify(id)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      Promise.resolve(send()).catch((error: unknown) => {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  callTool(call: ToolCall, timeoutMs?: number): Promise<RawMessage> {
    return this.request('tools/call', { name: call.name, arguments: call.arguments }, timeoutMs);
  }

  /** Writes a large payload in pieces, waiting for the pipe to drain (as a real client does). */
  async writeStreamed(pieces: Iterable<string>): Promise<void> {
    for (const piece of pieces) {
      if (this.hasExited) return;
      if (!this.child.stdin.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            this.child.stdin.off('drain', done);
            this.child.off('exit', done);
            resolve();
          };
          this.child.stdin.once('drain', done);
          this.child.once('exit', done);
        });
      }
    }
  }

  /** The most resident memory the process (and, separately, its live children) has had so far; undefined off Linux. */
  peakRss(): { self: number; children: number; count: number } | undefined {
    return this.pid === undefined || this.hasExited ? undefined : peakRssOfTree(this.pid);
  }

  closeStdin(): void {
    this.child.stdin.end();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  /**
   * Ends the process whatever state it is in and waits for it: stdin closed (how a stdio session
   * ends), SIGTERM after 500 ms (an HTTP server does not read stdin), SIGTERM again after 1 s (an
   * HTTP server drains on the first: the second stops it at once), SIGKILL after the grace.
   */
  async stop(graceMs = 3000): Promise<Exit> {
    if (!this.hasExited) {
      this.closeStdin();
      const term = setTimeout(() => this.kill('SIGTERM'), 500);
      const again = setTimeout(() => this.kill('SIGTERM'), 1000);
      const kill = setTimeout(() => this.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(term);
      clearTimeout(again);
      clearTimeout(kill);
    }
    return this.exited;
  }
}

/** Peak resident memory of a live process in bytes (Linux `/proc/<pid>/status` VmHWM), or undefined. */
export function peakRssOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/** Live descendants of a process (Linux /proc/<pid>/task/<tid>/children), depth first. */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(/\s+/).filter(Boolean).map(Number)) found.push(child, ...descendantsOf(child));
  }
  return found;
}

/**
 * Peak resident memory of a process plus that of its live descendants (query processes, git), in
 * bytes: the sum of their peaks, an upper bound of the peak of the whole. Undefined off Linux.
 */
export function peakRssOfTree(pid: number): { self: number; children: number; count: number } | undefined {
  const self = peakRssOf(pid);
  if (self === undefined) return undefined;
  const descendants = descendantsOf(pid);
  const children = descendants.reduce((sum, child) => sum + (peakRssOf(child) ?? 0), 0);
  return { self, children, count: descendants.length };
}

/** A server bin started with --http, and where it listens. */
export interface HttpServerProcess {
  url: string;
  origin: string;
  port: number;
  server: RawStdioServer;
}

/**
 * Starts a bin in HTTP mode on a free port (`--http --port 0`) and reads the bound URL from the
 * line the CLI prints on stderr ("<bin> listening on http://127.0.0.1:PORT/mcp").
 */
export async function startHttpServer(bin: string, args: string[], env?: Record<string, string | undefined>, timeoutMs = 30_000): Promise<HttpServerProcess> {
  const child = spawn(process.execPath, [bin, ...args, '--http', '--port', '0'], { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  const server = RawStdioServer.adopt(child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const url = /listening on (http:\/\/\S+\/mcp)/.exec(server.stderr())?.[1];
    if (url) {
      const parsed = new URL(url);
      return { url, origin: parsed.origin, port: Number(parsed.port), server };
    }
    if (server.hasExited || Date.now() > deadline) {
      await server.stop();
      throw new Error(`the HTTP server did not report its port${server.hasExited ? ' (it exited)' : ''}:\n${server.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Shapes a stack trace leaves in text: a V8 frame, Node's internals. */
const STACK_SHAPES = [
  /\bat (?:async )?\S[^\n]*? \(?(?:file:\/\/)?\/[^\s()]+:\d+:\d+\)?/,
  /\bnode:internal\b/,
  /\n\s+at [^\n]*?[\w/.-]+\.(?:[cm]?js|ts):\d+:\d+/,
];

/** The first stack-trace shape in `text`, if any. */
export function findStackTrace(text: string): string | undefined {
  for (const shape of STACK_SHAPES) {
    const match = shape.exec(text);
    if (match) return match[0].trim();
  }
  return undefined;
}

/**
 * Absolute POSIX paths in text: a slash not preceded by what would make it part of a URL, a
 * relative path or a word (`http://host/x`, `a/b`, `~/x`). Backslashes end a path: in JSON text
 * they escape the quote that closes it.
 */
const ABSOLUTE_PATH = /(?<![\w.~:/\\%@-])\/[^\s'"`<>|,;()[\]{}*?\\]+/g;
const FILE_URI = /file:\/\/(\/[^\s'"`<>|,;()[\]{}\\]+)/g;

const UNIVERSAL_PATHS = new Set(['/dev/null']);

const rootEntries = new Map<string, boolean>();

/** Whether `/name` exists on this machine: what separates a path of the machine from an API path such as /repos/acme/x. */
function rootEntryExists(name: string): boolean {
  let known = rootEntries.get(name);
  if (known === undefined) {
    known = existsSync(`/${name}`);
    rootEntries.set(name, known);
  }
  return known;
}

function inside(candidate: string, dir: string): boolean {
  const base = dir.endsWith('/') ? dir.slice(0, -1) : dir;
  return candidate === base || candidate.startsWith(`${base}/`);
}

/** Where the caller's own strings appear in the text (as written, or escaped as in JSON). */
function echoedSpans(text: string, given: readonly string[]): [number, number][] {
  const spans: [number, number][] = [];
  for (const g of given) {
    for (const form of new Set([g, JSON.stringify(g).slice(1, -1)])) {
      if (form.length < 2) continue;
      for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) spans.push([at, at + form.length]);
    }
  }
  return spans;
}

/**
 * Paths of this machine that `text` names although it should not: absolute paths whose first
 * component exists here, outside every `allowed` directory, and not the caller's own words
 * (`given`: the call's strings). A path counts as the caller's when it is part of one of their
 * strings, or starts inside the text where the answer repeats one; when the answer puts something
 * of its own in front of a repeated string, that prefix must be an allowed directory.
 */
export function findForeignPaths(text: string, allowed: readonly string[], given: readonly string[] = []): string[] {
  const found: string[] = [];
  const echoes = echoedSpans(text, given);
  const allowedPrefix = (prefix: string): boolean => {
    const trimmed = prefix.replace(/\/+$/, '');
    return trimmed === '' || allowed.some((dir) => inside(trimmed, dir));
  };
  const candidates = [
    ...[...text.matchAll(ABSOLUTE_PATH)].map((m) => ({ raw: m[0], at: m.index })),
    ...[...text.matchAll(FILE_URI)].map((m) => {
      let raw = m[1]!;
      try {
        raw = decodeURIComponent(raw);
      } catch {
        // Not percent-encoding after all: look at it as written.
      }
      return { raw, at: m.index + 'file://'.length };
    }),
  ];
  for (const { raw, at } of candidates) {
    const candidate = raw.replace(/[.:!]+$/, '');
    // The same on every machine, and part of formats (a new file's diff is "--- /dev/null").
    if (UNIVERSAL_PATHS.has(candidate)) continue;
    const first = candidate.split('/')[1];
    if (!first || !rootEntryExists(first)) continue;
    if (allowed.some((dir) => inside(candidate, dir))) continue;
    if (given.some((g) => g.includes(candidate))) continue;
    const end = at + candidate.length;
    if (echoes.some(([s, e]) => s <= at && at < e)) continue;
    const later = echoes.filter(([s]) => s > at && s < end).map(([s]) => s);
    if (later.length > 0 && allowedPrefix(text.slice(at, Math.min(...later)))) continue;
    found.push(candidate);
  }
  return found;
}

/** Every string inside a value (keys included), for `findForeignPaths`' `given`. */
export function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push(key);
      stringsIn(item, out);
    }
  }
  return out;
}

/** Suite temporary files and locks under these directories, at any depth (symlinks not followed). */
export async function suiteTempFilesUnder(directories: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  async function visit(dir: string): Promise<void> {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(dir, name);
      if (isSuiteTempName(name)) found.push(full);
      const stat = await lstat(full).catch(() => undefined);
      if (stat?.isDirectory()) await visit(full);
    }
  }
  for (const dir of directories) await visit(dir);
  return found;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request with full control of the headers (Host included, which fetch does not allow).
 * A server may answer and close before the body is sent (a 413); the answer still counts.
 */
export async function httpRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {}): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer from ${url} within ${options.timeoutMs ?? 30_000} ms`)));
    // EPIPE or a reset while the body is still going out: the response (if any) already resolved us.
    req.on('error', reject);
    req.end(options.body);
  });
}
