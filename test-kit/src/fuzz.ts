/**
 * The fuzzer: every tool of a server, called with arguments fast-check builds from the tool's own
 * input schema (see json-schema-arbitrary). One vitest test per tool.
 *
 *   // servers/<name>/test/fuzz.test.ts
 *   import { fuzzSuite } from '@suite/test-kit/fuzz';
 *   import { target } from './conformance-target.js';
 *   fuzzSuite(target);
 *
 * Arguments the schema accepts must get a result (isError allowed); arguments it rejects an isError
 * result. Never a JSON-RPC error, a crash, a stack trace, an unexpected failure (an error the tool
 * did not turn into a message), or a path of this machine outside the target's allowed ones. After
 * each tool the server must still answer a ping and the target's cheap call.
 *
 * SUITE_FUZZ_RUNS sets the cases per tool (default: the target's `fuzz.numRuns`, else 100) and
 * SUITE_FUZZ_SEED the seed (default fixed, so CI runs the same cases every time).
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { findForeignPaths, findStackTrace, stringsIn, type ConformanceTarget, type RawTool } from './conformance.js';
import { fuzzCases, type FuzzCase } from './json-schema-arbitrary.js';
import { spawnServer, type SpawnedSession, type TestSession } from './testing.js';

export * from './json-schema-arbitrary.js';
export type { ConformanceTarget, PreparedTarget, FuzzSettings, ToolCall } from './conformance.js';

/** The seed of every normal run: the same cases each time, so a failure in CI reproduces locally. */
export const DEFAULT_FUZZ_SEED = 20_240_611;
export const DEFAULT_FUZZ_RUNS = 100;
const MAX_CASE_BYTES = 4 * 1024 * 1024;

function envInteger(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(value)}`);
  return n;
}

/** A tool's own seed: tools of one server do not all walk the same sequence. */
function seedFor(base: number, tool: string): number {
  let h = base | 0;
  for (const c of tool) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

type Outcome =
  | { kind: 'result'; isError: boolean; text: string }
  | { kind: 'protocol'; code: number; message: string }
  | { kind: 'crash'; message: string };

interface ContentLike {
  type: string;
  text?: string;
  resource?: { text?: string };
}

/** Everything a result says in words: text blocks, embedded text resources and structured content. */
function wordsOf(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts: string[] = [];
  for (const block of (Array.isArray(result.content) ? result.content : []) as ContentLike[]) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    if (block.type === 'resource' && typeof block.resource?.text === 'string') parts.push(block.resource.text);
  }
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

/**
 * A session against the server, opened again when the server died, and what counts as a crash:
 * the session closing (the process exited), or, in the process, an error that escaped every
 * handler (it would have ended the bin).
 */
export class FuzzConnection {
  private session: TestSession | undefined;
  private closed = false;
  private listening = false;
  private previous: string | undefined;
  private readonly uncaught: string[] = [];
  private readonly onUncaught = (error: unknown): void => {
    this.uncaught.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  };

  constructor(
    private readonly connect: () => Promise<TestSession>,
    readonly inProcess: boolean,
  ) {}

  async open(): Promise<TestSession> {
    if (this.session && !this.closed) return this.session;
    await this.session?.close().catch(() => undefined);
    this.closed = false;
    if (this.inProcess && !this.listening) {
      process.on('uncaughtException', this.onUncaught);
      process.on('unhandledRejection', this.onUncaught);
      this.listening = true;
    }
    const session = await this.connect();
    this.session = session;
    session.client.onclose = () => {
      if (this.session === session) this.closed = true;
    };
    // tools/list first: the client then checks structured content against each tool's output schema.
    await session.client.listTools();
    return session;
  }

  /** The crash since the last look, if any. */
  crash(): string | undefined {
    if (this.closed) return `the server exited. Its stderr ends:\n${this.stderr().slice(-3000)}`;
    if (this.uncaught.length > 0) return `an uncaught error escaped the server:\n${this.uncaught.splice(0).join('\n')}`;
    return undefined;
  }

  stderr(): string {
    const session = this.session as Partial<SpawnedSession> | undefined;
    return typeof session?.stderr === 'function' ? session.stderr() : '';
  }

  async call(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<Outcome> {
    // A crash after an answer (an error escaping later) shows up now: name the call it followed.
    const earlier = this.crash();
    const previous = this.previous;
    this.previous = `${name}(${printable(args)})`;
    if (earlier) {
      // A fresh process for the next case (and for fast-check's shrinking).
      await this.open();
      return { kind: 'crash', message: `${earlier}\n(it happened after the previous call, ${previous ?? 'none'}, had been answered)` };
    }
    const session = await this.open();
    try {
      const result = (await session.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as { content?: unknown; structuredContent?: unknown; isError?: unknown };
      const crash = this.crash();
      if (crash) return { kind: 'crash', message: crash };
      return { kind: 'result', isError: result.isError === true, text: wordsOf(result) };
    } catch (error) {
      const crash = this.crash();
      if (crash) return { kind: 'crash', message: crash };
      if (error instanceof McpError) return { kind: 'protocol', code: error.code, message: error.message };
      return { kind: 'crash', message: `the call failed outside the protocol: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  async close(): Promise<void> {
    process.off('uncaughtException', this.onUncaught);
    process.off('unhandledRejection', this.onUncaught);
    this.listening = false;
    await this.session?.close().catch(() => undefined);
    this.session = undefined;
  }
}

/** What is wrong with one answer, or an empty list. */
function problemsWith(outcome: Outcome, fuzzCase: FuzzCase, options: FuzzToolOptions, connection: FuzzConnection): string[] {
  if (outcome.kind === 'crash') return [outcome.message];
  if (outcome.kind === 'protocol') {
    return [`a JSON-RPC error (${outcome.code}) instead of ${fuzzCase.violation ? 'an isError result' : 'a result'}: ${outcome.message.slice(0, 500)}`];
  }
  const problems: string[] = [];
  const stack = findStackTrace(outcome.text);
  if (stack) problems.push(`a stack trace in the answer: ${stack}`);
  // A stateful server (an issue tracker, a database) gives back what earlier calls stored: their words count as given too.
  const paths = findForeignPaths(outcome.text, options.allowedPaths, stringsIn(fuzzCase.args)).filter((p) => ![...(options.history ?? [])].some((g) => g.includes(p)));
  if (paths.length > 0) problems.push(`paths of this machine outside the sandbox in the answer: ${paths.join(', ')}`);
  if ((options.secrets ?? []).some((secret) => outcome.text.includes(secret) || connection.stderr().includes(secret))) problems.push('a secret in the answer or the server log');
  const unexpected = /failed unexpectedly \(error id ([0-9a-f]+)\)/.exec(outcome.text);
  if (unexpected) {
    const detail = connection.stderr().split('\n').filter((line) => line.includes(unexpected[1]!)).join('\n');
    problems.push(`an unexpected failure, not a message the model can act on: ${outcome.text.slice(0, 300)}${detail ? `\nserver log: ${detail.slice(0, 3000)}` : ''}`);
  }
  if (fuzzCase.violation && !outcome.isError) problems.push(`arguments the schema rejects (${fuzzCase.violation}) were accepted: ${outcome.text.slice(0, 300)}`);
  return problems;
}

function printable(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}… (${v.length} characters)` : v));
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

export interface FuzzToolOptions {
  numRuns: number;
  seed: number;
  /** Real paths the answers may name (see PreparedTarget.allowedPaths). */
  allowedPaths: readonly string[];
  samples?: readonly string[];
  namedSamples?: Readonly<Record<string, readonly unknown[]>>;
  /** Per-call limit in ms (default 20000). */
  callTimeoutMs?: number;
  /** A path option-like strings point at (`--output=<canary>`); it must not exist afterwards. */
  canary?: string;
  /** Values no answer and no log line may contain. */
  secrets?: readonly string[];
  /** Every string sent so far (filled in as calls go out; share one set across a server's tools). */
  history?: Set<string>;
}

/**
 * Runs fast-check over one tool: `numRuns` calls with arguments from its input schema. Rejects with
 * fast-check's report (seed, shrunk counterexample, what was wrong) at the first problem.
 */
/** How the calls of one run went: what reached the tool's work and what it refused. */
export interface FuzzStats {
  calls: number;
  /** Answers without isError: the cases that got past validation and lookups. */
  succeeded: number;
}

export async function fuzzTool(connection: FuzzConnection, tool: { name: string; inputSchema: Record<string, unknown> }, options: FuzzToolOptions): Promise<FuzzStats> {
  const stats: FuzzStats = { calls: 0, succeeded: 0 };
  const cases = fc
    .limitShrink(
      fuzzCases(tool.inputSchema, { samples: options.samples ?? [], namedSamples: options.namedSamples ?? {}, ...(options.canary ? { canary: options.canary } : {}) }),
      200,
    )
    // Within what every transport carries (4 MiB, the HTTP default): a string at a maxLength of a
    // million NULs is 6 MB of JSON, and message limits are the abuse kit's business.
    .filter((c) => Buffer.byteLength(JSON.stringify(c.args)) <= MAX_CASE_BYTES)
    // fast-check prints a counterexample whole; a 4 KiB string would bury the report.
    .map((c) => ({ ...c, [fc.toStringMethod]: () => `${printable(c.args)}${c.violation ? ` [${c.violation}]` : ''}` }));
  await fc.assert(
    fc.asyncProperty(cases, async (fuzzCase) => {
      for (const text of stringsIn(fuzzCase.args)) options.history?.add(text);
      const outcome = await connection.call(tool.name, fuzzCase.args, options.callTimeoutMs ?? 20_000);
      stats.calls += 1;
      if (outcome.kind === 'result' && !outcome.isError) stats.succeeded += 1;
      const problems = problemsWith(outcome, fuzzCase, options, connection);
      if (problems.length > 0) throw new Error(`${tool.name}(${printable(fuzzCase.args)})${fuzzCase.violation ? ` [${fuzzCase.violation}]` : ''}:\n${problems.join('\n')}`);
    }),
    { numRuns: options.numRuns, seed: seedFor(options.seed, tool.name), includeErrorInReport: true },
  );
  if (options.canary && existsSync(options.canary)) throw new Error(`an option-like argument made the server create ${options.canary}`);
  return stats;
}

/**
 * Registers one test per tool of the target. The tools are listed while vitest collects the suite
 * (its factory is async), so the server is started then; the target is prepared once per file.
 */
export function fuzzSuite(target: ConformanceTarget): void {
  describe(`fuzz: ${target.name}, every tool from its input schema`, async () => {
    const prepared = await target.prepare();
    const connect = prepared.fuzz?.connect;
    const connection = connect
      ? new FuzzConnection(connect, true)
      : // Errors at least on stderr, so an unexpected failure's id can be matched with its detail.
        new FuzzConnection(() => spawnServer(target.bin, prepared.args, { env: { SUITE_LOG_LEVEL: 'error', ...prepared.env } }), false);
    let tools: RawTool[];
    try {
      tools = (await (await connection.open()).client.listTools()).tools as RawTool[];
    } catch (error) {
      await connection.close();
      await prepared.cleanup();
      throw error;
    }
    if (tools.length === 0) throw new Error(`${target.name} lists no tools`);
    const numRuns = envInteger('SUITE_FUZZ_RUNS') ?? prepared.fuzz?.numRuns ?? DEFAULT_FUZZ_RUNS;
    const seed = envInteger('SUITE_FUZZ_SEED') ?? DEFAULT_FUZZ_SEED;
    const options: FuzzToolOptions = {
      numRuns,
      seed,
      allowedPaths: prepared.allowedPaths,
      samples: prepared.samples ?? [],
      namedSamples: prepared.namedSamples ?? {},
      history: new Set(),
      secrets: prepared.secrets ?? [],
      canary: path.join(os.tmpdir(), `suite-fuzz-canary-${process.pid}`),
      ...(prepared.fuzz?.callTimeoutMs ? { callTimeoutMs: prepared.fuzz.callTimeoutMs } : {}),
    };
    const timings: { tool: string; ms: number; stats: FuzzStats }[] = [];

    afterAll(async () => {
      await connection.close();
      await prepared.cleanup();
      const total = timings.reduce((sum, t) => sum + t.ms, 0);
      const calls = timings.reduce((sum, t) => sum + t.stats.calls, 0);
      const succeeded = timings.reduce((sum, t) => sum + t.stats.succeeded, 0);
      const slowest = [...timings].sort((a, b) => b.ms - a.ms)[0];
      // Tools no case got through are fuzzed at their validation only: worth better samples.
      const shallow = timings.filter((t) => t.stats.succeeded === 0).map((t) => t.tool);
      console.log(
        `[fuzz] ${target.name}: ${timings.length} tools × ${numRuns} cases (seed ${seed}, ${connection.inProcess ? 'in-process' : 'stdio of the built bin'}) in ${(total / 1000).toFixed(1)} s` +
          `; ${calls ? Math.round((100 * succeeded) / calls) : 0}% of calls succeeded` +
          (slowest ? `; slowest ${slowest.tool} ${(slowest.ms / 1000).toFixed(1)} s` : '') +
          (shallow.length > 0 ? `; no call succeeded for ${shallow.join(', ')}` : ''),
      );
    }, 60_000);

    for (const tool of tools) {
      it(`${tool.name}: ${numRuns} cases from its input schema`, async () => {
        const started = performance.now();
        await prepared.fuzz?.reset?.();
        const stats = await fuzzTool(connection, tool, options);
        // Still alive and still right.
        const session = await connection.open();
        await session.client.ping();
        const cheap = await session.callTool(prepared.cheapCall.name, prepared.cheapCall.arguments);
        expect(cheap.isError, `the cheap call after fuzzing ${tool.name}: ${cheap.text}`).toBe(false);
        expect(connection.crash()).toBeUndefined();
        timings.push({ tool: tool.name, ms: performance.now() - started, stats });
      }, 120_000 + numRuns * 500);
    }
  });
}
