import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHttpServer, type HttpServerProcess } from './conformance.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A Redis of the test's own (the machine's redis-server binary on a free port, nothing on disk), to stop and start again. */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      proc.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('error', (error) => reject(new Error(`redis-server could not run (is Redis installed?): ${error.message}`)));
    });
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

/** A file holding a fresh requestState key (48 random bytes, base64). */
export async function requestStateKeyFile(dir: string): Promise<string> {
  const file = path.join(dir, `state-${randomBytes(4).toString('hex')}.key`);
  await writeFile(file, randomBytes(48).toString('base64'), { mode: 0o600 });
  return file;
}

/** Replicas of a built bin over HTTP, each on its own port, with the same extra arguments. */
export async function startReplicas(bin: string, args: string[], count: number, env?: Record<string, string | undefined>): Promise<HttpServerProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startHttpServer(bin, args, env)));
}

/** haproxy in front of replicas, from the repository's own deploy/haproxy.cfg.template. */
export interface LoadBalancer {
  url: string;
  /** Requests each replica answered so far (haproxy's own count), in replica order. */
  served(): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * `port`: the load balancer's, chosen before the replicas start (they must accept its Host header:
 * `--allowed-host 127.0.0.1:<port>`); a free one otherwise.
 */
export async function startHaproxy(replicas: readonly HttpServerProcess[], workDir: string, port?: number): Promise<LoadBalancer> {
  port ??= await freePort();
  const template = await readFile(path.join(root, 'deploy', 'haproxy.cfg.template'), 'utf8');
  const servers = replicas.map((r, i) => `    server r${i + 1} 127.0.0.1:${r.port} check`).join('\n');
  const config = path.join(workDir, `haproxy-${port}.cfg`);
  await writeFile(config, template.replace('${PORT}', String(port)).replace('${SERVERS}', servers));
  const child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`haproxy could not run (apt-get install haproxy): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`haproxy exited (${code}):\n${log}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<string> => (await fetch(`${base}/haproxy-stats;csv`)).text();
  // Up once every replica passed its health check.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const csv = await Promise.race([stats().catch(() => ''), failed]);
    const up = csv.split('\n').filter((line) => line.startsWith('replicas,r') && line.split(',')[17] === 'UP').length;
    if (up === replicas.length) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not see every replica up:\n${csv}\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `${base}/mcp`,
    served: async () => {
      const rows = (await stats()).split('\n').filter((line) => line.startsWith('replicas,r'));
      return rows.map((row) => Number(row.split(',')[7]));
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
