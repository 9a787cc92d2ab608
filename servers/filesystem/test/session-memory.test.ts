import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeHub, Logger, serveHttp, type RunningHttp } from '@suite/shared';
import { makeTempDir } from '@suite/test-kit';
import { DEFAULT_LIMITS, type FilesystemConfig } from '../src/config.js';
import { buildServer } from '../src/server.js';

// Every HTTP session builds the server anew. Its tools (schemas, descriptions, handlers) are built
// once per configuration and shared, so an idle session costs little: about 15 KiB of heap here,
// against about 260 KiB when each session built its 17 tools again.
const SESSIONS = 300;
const MAX_HEAP_PER_SESSION = 64 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('an idle HTTP session', () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let changes: ChangeHub;
  let running: RunningHttp;

  beforeAll(async () => {
    temp = await makeTempDir('fs-sessions-');
    changes = new ChangeHub();
    const config: FilesystemConfig = { directories: [temp.dir], aliases: [temp.dir], readOnly: false, limits: DEFAULT_LIMITS };
    running = await serveHttp((session) => buildServer(config, { session, changes }), {
      port: 0,
      host: '127.0.0.1',
      log: new Logger('filesystem'),
      maxSessions: SESSIONS * 2,
    });
  });

  afterAll(async () => {
    await running?.close();
    await changes?.close();
    await temp?.cleanup();
  });

  const initialize = async (i: number): Promise<void> => {
    const response = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `client-${i}`, version: '0' } },
      }),
    });
    expect(response.status).toBe(200);
    await response.text();
  };

  it(`costs under ${MAX_HEAP_PER_SESSION / 1024} KiB of heap (the tools are shared by every session)`, async () => {
    // The first sessions build what is built once (the tool list, JSON Schemas, lazily loaded modules).
    for (let i = 0; i < 20; i++) await initialize(-i);
    const opened = running.sessionCount();
    const before = heapUsed();
    for (let i = 0; i < SESSIONS; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => initialize(i + j)));
    const perSession = (heapUsed() - before) / (running.sessionCount() - opened);
    expect(running.sessionCount() - opened).toBe(SESSIONS);
    expect(perSession).toBeLessThan(MAX_HEAP_PER_SESSION);
  });
});
