/**
 * A real Prometheus (Debian's `prometheus` package) scraping the given targets every second, with
 * its HTTP query API for a test to read what it scraped. Its storage is a temporary directory.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './replicas.js';

export interface Prometheus {
  url: string;
  /** An instant query's vector result: each series' labels and value. */
  query(expression: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Waits until `predicate` holds of the query's result; fails after `timeoutMs` with the last result. */
  waitFor(expression: string, predicate: (result: { metric: Record<string, string>; value: number }[]) => boolean, timeoutMs?: number): Promise<{ metric: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

const BINARY = process.env.SUITE_PROMETHEUS ?? '/usr/bin/prometheus';

export async function startPrometheus(targets: readonly string[]): Promise<Prometheus> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-prometheus-'));
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  await writeFile(
    config,
    ['global:', '  scrape_interval: 1s', '  scrape_timeout: 900ms', 'scrape_configs:', '  - job_name: suite', '    static_configs:', `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`, ''].join('\n'),
  );
  const child = spawn(BINARY, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`prometheus could not run (apt-get install prometheus): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`prometheus exited (${code}):\n${log}`)));
  });
  failed.catch(() => undefined);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await Promise.race([fetch(`${url}/-/ready`).then((r) => r.ok, () => false), failed]);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus did not become ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const query = async (expression: string): Promise<{ metric: Record<string, string>; value: number }[]> => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success' || !body.data) throw new Error(`prometheus query failed: ${body.error ?? response.status}`);
    return body.data.result.map((series) => ({ metric: series.metric, value: Number(series.value[1]) }));
  };
  return {
    url,
    query,
    async waitFor(expression, predicate, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const result = await query(expression);
        if (predicate(result)) return result;
        if (Date.now() > until) throw new Error(`prometheus: ${expression} did not reach the expected value in ${timeoutMs} ms; last: ${JSON.stringify(result)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
