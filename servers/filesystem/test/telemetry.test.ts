import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer } from '@suite/test-kit';
import { startOtlpReceiver, type OtlpReceiver } from '@suite/test-kit/otlp';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(pkg, 'dist', 'index.js');

/**
 * The bundled bin keeps the OpenTelemetry SDK in dist/telemetry-sdk.js, imported only when telemetry
 * is configured: these run the real bundle, as npx and the MCP Bundle run it.
 */
describe('telemetry of the bundled bin', () => {
  let receiver: OtlpReceiver;
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    ({ dir, cleanup } = await makeTempDir('fs-telemetry-'));
    file = path.join(dir, 'hello.txt');
    await writeFile(file, 'hello\n');
  });
  afterAll(async () => {
    await receiver.close();
    await cleanup();
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT, a stdio call is a span parented on the traceparent in _meta', async () => {
    const session = await spawnServer(bin, [dir], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' } });
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    try {
      const result = await session.client.callTool({ name: 'read_text_file', arguments: { path: file }, _meta: { traceparent: `00-${traceId}-${spanId}-01` } });
      expect(result.isError).toBeFalsy();
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === traceId));
      const span = spans.find((s) => s.traceId === traceId)!;
      expect(span.name).toBe('tools/call read_text_file');
      expect(span.parentSpanId).toBe(spanId);
      expect(span.resource['service.name']).toBe('mcp-server-filesystem');
      expect(span.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'read_text_file', 'network.transport': 'pipe' });
    } finally {
      await session.close();
    }
  });

  it('with telemetry off the SDK file is never opened: the bin works without it, and fails to start without it when configured', async () => {
    // A copy of the bin beside the package's node_modules, without dist/telemetry-sdk.js next to it.
    const alone = await mkdtemp(path.join(pkg, '.telemetry-test-'));
    try {
      await copyFile(bin, path.join(alone, 'index.js'));
      const session = await spawnServer(path.join(alone, 'index.js'), [dir], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_TRACES_EXPORTER: undefined, OTEL_METRICS_EXPORTER: undefined } });
      try {
        const text = await session.callTool('read_text_file', { path: file });
        expect(text.isError).toBe(false);
      } finally {
        await session.close();
      }
      await expect(spawnServer(path.join(alone, 'index.js'), [dir], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } })).rejects.toThrow();
    } finally {
      await rm(alone, { recursive: true, force: true });
    }
  });
});
