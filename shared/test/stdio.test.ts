import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvelope } from '../src/transports/json-rpc-envelope.js';
import { StdioTransport } from '../src/transports/stdio.js';
import { spawnServer, waitUntil, type SpawnedSession } from '@suite/test-kit';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'stdio-bin.mjs');
const MiB = 1024 * 1024;

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

interface RawMessage {
  jsonrpc: string;
  id?: string | number | null;
  method?: string;
  result?: { content?: { type: string; text: string }[]; isError?: boolean };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** A client that writes raw bytes to the server's stdin, to send what the SDK client never would. */
class RawClient {
  readonly messages: RawMessage[] = [];
  stderr = '';
  private buffered = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      this.buffered += text;
      let newline: number;
      while ((newline = this.buffered.indexOf('\n')) !== -1) {
        this.messages.push(JSON.parse(this.buffered.slice(0, newline)) as RawMessage);
        this.buffered = this.buffered.slice(newline + 1);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  static async start(args: string[] = [], capabilities: Record<string, unknown> = {}): Promise<RawClient> {
    const client = new RawClient(spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
    client.send({ ...INIT, params: { ...INIT.params, capabilities } });
    await client.response(0);
    client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return client;
  }

  send(message: unknown): void {
    this.write(`${JSON.stringify(message)}\n`);
  }

  write(text: string): void {
    this.child.stdin.write(text);
  }

  /** Writes `bytes` bytes of filler in 1 MiB pieces, waiting for the pipe to drain. */
  async writeFiller(bytes: number): Promise<void> {
    const piece = 'x'.repeat(MiB);
    for (let left = bytes; left > 0; left -= MiB) {
      if (!this.child.stdin.write(left >= MiB ? piece : piece.slice(0, left))) await new Promise((r) => this.child.stdin.once('drain', r));
    }
  }

  async response(id: string | number | null, timeoutMs = 10_000): Promise<RawMessage> {
    let found: RawMessage | undefined;
    await waitUntil(() => (found = this.messages.find((m) => m.id === id && (m.result || m.error))) !== undefined, { what: `the answer to ${JSON.stringify(id)}`, timeoutMs });
    return found!;
  }

  callTool(id: number | string, name: string, args: Record<string, unknown> = {}): void {
    this.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  }

  async stop(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}

/** Peak resident memory of a process (Linux VmHWM), in bytes. */
function peakRss(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb * 1024;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
});

async function spawnProbe(args: string[] = []): Promise<SpawnedSession> {
  const session = await spawnServer(BIN, args);
  cleanups.push(() => session.close());
  return session;
}

async function rawProbe(args: string[] = [], capabilities: Record<string, unknown> = {}): Promise<RawClient> {
  const client = await RawClient.start(args, capabilities);
  cleanups.push(async () => {
    client.child.kill('SIGKILL');
    await client.exited;
  });
  return client;
}

describe('stdio transport: oversized messages', () => {
  it('answers a 50 MB tools/call with a JSON-RPC error naming the limit, without holding it in memory, and keeps serving (work in flight included)', async () => {
    const session = await spawnProbe();
    expect((await session.callTool('ping')).text).toBe('pong');
    const before = peakRss(session.pid!);
    const inFlight = session.callTool('slow', { ms: 1500 });
    const huge = session.callTool('measure', { text: 'x'.repeat(50 * MiB) }, { timeout: 60_000 });
    const error = await huge.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect((error as McpError).message).toContain('over this server\'s limit of 10 MiB (10485760 bytes)');
    expect((error as McpError).message).toContain('--max-message-bytes');
    expect((await inFlight).text).toBe('slept 1500');
    expect((await session.callTool('ping')).text).toBe('pong');
    expect((await session.callTool('measure', { text: 'y'.repeat(1000) })).text).toBe('1000');
    // Discarded as it streamed: holding it would add at least 100 MiB (its bytes and its string). What the peak does
    // grow by is the limit's worth, the young generation's growth and chunks read since the last scavenge: ~32 MiB on
    // Node 20, 52 to 80 MiB on Node 24 (before the scavenges while discarding: 45, and 55 to 92 MiB).
    expect(peakRss(session.pid!) - before).toBeLessThan(90 * MiB);
    expect(session.stderr()).toContain('refused a');
  }, 60_000);

  it('holds a bounded amount whatever the size: a 200 MB message raises the peak by less than half of it', async () => {
    const client = await rawProbe();
    const before = peakRss(client.child.pid!);
    client.write('{"method":"tools/call","params":{"name":"measure","arguments":{"text":"');
    await client.writeFiller(200 * MiB);
    client.write('"}},"jsonrpc":"2.0","id":3}\n');
    expect((await client.response(3, 30_000)).error?.code).toBe(-32600);
    // As for 50 MB (~32 MiB on Node 20, 52 to 80 MiB on Node 24): the size does not matter. Holding it would be 400 MiB.
    expect(peakRss(client.child.pid!) - before).toBeLessThan(100 * MiB);
  }, 60_000);

  it('reads the id from the start of the message too (the Python SDK writes it first)', async () => {
    const client = await rawProbe();
    client.write('{"jsonrpc":"2.0","id":"first-id","method":"tools/call","params":{"name":"measure","arguments":{"text":"');
    await client.writeFiller(12 * MiB);
    client.write('"}}}\n');
    const answer = await client.response('first-id');
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.data).toEqual({ receivedBytes: expect.any(Number), maxMessageBytes: 10 * MiB });
    client.callTool(2, 'ping');
    expect((await client.response(2)).result?.content?.[0]?.text).toBe('pong');
  }, 30_000);

  it('drops an oversized message without an id (a notification) with a warning on stderr, and keeps serving', async () => {
    const client = await rawProbe();
    client.write('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"message":"');
    await client.writeFiller(11 * MiB);
    client.write('"}}\n');
    client.callTool(7, 'ping');
    expect((await client.response(7)).result?.content?.[0]?.text).toBe('pong');
    expect(client.stderr).toMatch(/dropped a \d+-byte message without a readable id: it is over the 10 MiB \(10485760 bytes\) limit \(--max-message-bytes\)/);
    // Nothing was answered for it: the only answers are to initialize and to the ping.
    expect(client.messages.map((m) => m.id)).toEqual([0, 7]);
  }, 30_000);

  it("fails the server's own request when the client's response to it is oversized, instead of leaving it waiting", async () => {
    const client = await rawProbe([], { sampling: {} });
    client.callTool(1, 'ask');
    let request: RawMessage | undefined;
    await waitUntil(() => (request = client.messages.find((m) => m.method === 'sampling/createMessage')) !== undefined, { what: 'the sampling request' });
    client.write(`{"jsonrpc":"2.0","id":${JSON.stringify(request!.id)},"result":{"role":"assistant","model":"m","content":{"type":"text","text":"`);
    await client.writeFiller(11 * MiB);
    client.write('"}}}\n');
    const answer = await client.response(1);
    expect(answer.result?.isError).toBe(true);
    expect(client.stderr).toMatch(/dropped a \d+-byte response over the 10 MiB \(10485760 bytes\) limit/);
  }, 30_000);

  it('--max-message-bytes lowers and raises the limit', async () => {
    const small = await rawProbe(['--max-message-bytes', '2048']);
    small.callTool(1, 'measure', { text: 'a'.repeat(1500) });
    expect((await small.response(1)).result?.content?.[0]?.text).toBe('1500');
    small.callTool(2, 'measure', { text: 'a'.repeat(3000) });
    const refused = await small.response(2);
    expect(refused.error).toMatchObject({ code: -32600, data: { maxMessageBytes: 2048 } });
    expect(refused.error?.message).toContain('limit of 2 KiB (2048 bytes)');

    const large = await rawProbe(['--max-message-bytes', String(20 * MiB)]);
    large.callTool(1, 'measure', { text: 'b'.repeat(12 * MiB) });
    expect((await large.response(1, 30_000)).result?.content?.[0]?.text).toBe(String(12 * MiB));
  }, 60_000);

  it('refuses a --max-message-bytes that is not a size it can honour', async () => {
    for (const value of ['abc', '10', String(1024 * MiB)]) {
      const child = spawn(process.execPath, [BIN, '--max-message-bytes', value], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toContain('--max-message-bytes must be');
    }
  });

  it('exits within 1 s when stdin closes in the middle of an oversized message', async () => {
    const client = await rawProbe();
    client.write('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"measure","arguments":{"text":"');
    await client.writeFiller(15 * MiB);
    const closedAt = Date.now();
    client.child.stdin.end();
    expect(await client.exited).toBe(0);
    expect(Date.now() - closedAt).toBeLessThan(1000);
  }, 30_000);
});

describe('stdio transport: malformed input', () => {
  it('answers a non-JSON line with -32700 and JSON that is not JSON-RPC with -32600, and keeps serving', async () => {
    const client = await rawProbe();
    client.write('this is not json\n');
    const parseError = await client.response(null);
    expect(parseError.error?.code).toBe(-32700);
    expect(parseError.error?.message).toContain('Parse error');
    client.messages.length = 0;

    client.write('{"foo":"bar"}\n');
    expect((await client.response(null)).error).toMatchObject({ code: -32600 });
    client.messages.length = 0;
    client.write('[1,2,3]\n');
    expect((await client.response(null)).error?.message).toContain('batches');
    client.messages.length = 0;
    client.write('{"jsonrpc":"2.0","id":"bad","method":42}\n');
    expect((await client.response('bad')).error).toMatchObject({ code: -32600 });
    client.write('{"jsonrpc":"1.0","id":9,"method":"ping"}\n');
    expect((await client.response(9)).error).toMatchObject({ code: -32600 });
    // Blank lines and CRLF line endings are fine.
    client.write('\n\r\n');
    client.write(`${JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'ping', arguments: {} } })}\r\n`);
    expect((await client.response(10)).result?.content?.[0]?.text).toBe('pong');
    // A malformed response to a request we never sent is not answered (no ping-pong of errors).
    client.messages.length = 0;
    client.write('{"jsonrpc":"2.0","id":77,"result":"not an object"}\n');
    client.callTool(11, 'ping');
    await client.response(11);
    expect(client.messages.map((m) => m.id)).toEqual([11]);
  }, 30_000);
});

describe('stdio transport: deeply nested JSON', () => {
  const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('answers a message nested past the bound with -32600 naming it, wherever the nesting is (tool arguments, _meta), and keeps serving', async () => {
    const client = await rawProbe();
    // 5,000 levels overflowed the stack of the SDK's validation (a -32603 "Maximum call stack size exceeded").
    for (const [id, params] of [
      [1, `{"name":"ping","arguments":{"x":${nested(5000)}}}`],
      [2, `{"name":"ping","arguments":{},"_meta":{"x":${nested(5000)}}}`],
      [3, `{"name":"ping","arguments":{},"_meta":{"progressToken":${nested(100_000)}}}`],
    ] as const) {
      client.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}\n`);
      const answer = await client.response(id);
      expect(answer.error).toMatchObject({ code: -32600, data: { maxNesting: 512 } });
      expect(answer.error?.message).toMatch(/more than 512 levels deep/);
    }
    // Within the bound, nesting is served as before.
    client.write(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ping","arguments":{},"_meta":{"x":${nested(500)}}}}\n`);
    expect((await client.response(4)).result?.content?.[0]?.text).toBe('pong');
    // A 2026-07-28 request is refused the same way.
    const envelope = '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}';
    client.write(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{${envelope},"x":${nested(5000)}}}}\n`);
    expect((await client.response(5)).error).toMatchObject({ code: -32600, data: { maxNesting: 512 } });
    client.callTool(6, 'ping');
    expect((await client.response(6)).result?.content?.[0]?.text).toBe('pong');
  }, 30_000);
});

describe('stdio transport: writing under load', () => {
  it('answers 1,000 concurrent calls without a MaxListenersExceededWarning, in the server or in the client', async () => {
    // The client side is the test process: the kit's stdio client must not pile up drain listeners either.
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const session = await spawnProbe();
      // Answers of a few KiB each, and calls of 16 KiB each: together far more than a pipe holds, so
      // both the server's stdout and its stdin (the client's writes) fill and must drain.
      const padding = 'x'.repeat(16 * 1024);
      const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => session.callTool('fill', { bytes: 4096 + i, padding })));
      expect(answers.map((a) => a.text.length)).toEqual(Array.from({ length: 1000 }, (_, i) => 4096 + i));
      // Warnings are printed asynchronously: give one a moment to arrive.
      await new Promise((r) => setTimeout(r, 200));
      expect(session.stderr()).not.toContain('MaxListenersExceededWarning');
      expect(session.stderr()).not.toContain('Warning');
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  }, 60_000);
});

describe('StdioTransport writes', () => {
  it('waits for a full stdout with one drain listener, however many messages queue, and keeps their order', async () => {
    const written: string[] = [];
    let release: (() => void) | undefined;
    // A real stream with a tiny buffer whose writes complete only when the test says so.
    const stdout = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk.toString('utf8'));
        release = callback;
      },
    });
    const transport = new StdioTransport({ stdin: new PassThrough(), stdout });
    await transport.start();
    const sends = Array.from({ length: 1000 }, (_, i) => transport.send({ jsonrpc: '2.0', id: i, result: {} }));
    expect(stdout.listenerCount('drain')).toBe(1);
    let settled = 0;
    for (const send of sends) void send.then(() => settled++);
    while (written.length < 1000) {
      const next = release;
      release = undefined;
      next?.();
      await new Promise((r) => setImmediate(r));
      expect(stdout.listenerCount('drain')).toBeLessThanOrEqual(1);
    }
    await Promise.all(sends);
    expect(settled).toBe(1000);
    expect(written.map((line) => (JSON.parse(line) as { id: number }).id)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    await transport.close();
  });
});

describe('StdioTransport reads', () => {
  it('scavenges every 16 MiB while an oversized line streams past, and not while lines are within the limit', async () => {
    let collections = 0;
    const stdin = new PassThrough();
    const answers: string[] = [];
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        answers.push(chunk.toString('utf8'));
        callback();
      },
    });
    const transport = new StdioTransport({ stdin, stdout, maxMessageBytes: MiB, collectDiscarded: () => collections++ });
    await transport.start();
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pushBytes = async (bytes: number): Promise<void> => {
      for (let sent = 0; sent < bytes; sent += chunk.length) {
        stdin.write(chunk);
        if (sent % MiB === 0) await new Promise((r) => setImmediate(r));
      }
    };
    // Lines under the limit are handed over whole: nothing to collect, whatever their total.
    for (let i = 0; i < 40; i++) {
      stdin.write(`{"jsonrpc":"2.0","method":"notifications/x","params":{"t":"${'y'.repeat(MiB / 2)}"}}\n`);
    }
    await new Promise((r) => setImmediate(r));
    expect(collections).toBe(0);
    stdin.write('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"t":"');
    await pushBytes(50 * MiB);
    stdin.write('"}}\n');
    await waitUntil(() => answers.length > 0);
    // 49 MiB past the 1 MiB limit: three collections, one per 16 MiB discarded.
    expect(collections).toBe(3);
    expect((JSON.parse(answers[0]!) as { id: number; error: { code: number } }).error.code).toBe(-32600);
    await transport.close();
  });
});

describe('readEnvelope', () => {
  it('finds a top-level id at either end, never a nested one', () => {
    expect(readEnvelope('{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"', '')).toMatchObject({ id: 12 });
    const env = readEnvelope('{"method":"tools/call","params":{"id":"nested","text":"xx', 'xx\\"id\\":99"}},"jsonrpc":"2.0","id":"outer"}');
    expect(env.id).toBe('outer');
    expect([...env.keys].sort()).toEqual(['id', 'jsonrpc', 'method', 'params']);
    expect(readEnvelope('{"method":"m","params":{"id":3,"a":"', '"}}').id).toBeUndefined();
  });

  it('stops at whatever it cannot see whole, rather than guess', () => {
    // The tail starts inside a string: the escaped quote before "id" cannot be told from a real one.
    expect(readEnvelope('', '"id\\":4}"}').id).toBeUndefined();
    expect(readEnvelope('', '\\"x":1, "id":4}').id).toBe(4);
    expect(readEnvelope('{"id":', '').id).toBeUndefined();
    expect(readEnvelope('{"id":12', '').id).toBeUndefined();
    expect(readEnvelope('{"id":{"a":1},"method":"x"', '').id).toBeUndefined();
    expect(readEnvelope('not json at all', 'neither').id).toBeUndefined();
  });

  it('tells a response from a request', () => {
    expect([...readEnvelope('{"result":{"content":[{"text":"', '"}]},"jsonrpc":"2.0","id":1}').keys]).toContain('result');
  });
});
