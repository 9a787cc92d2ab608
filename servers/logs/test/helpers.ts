import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, makeTempDir, type TestSession } from '@suite/shared/testing';
import { DEFAULT_JSON_FIELDS, DEFAULT_LIMITS, buildServer, type LogsConfig, type LogsLimits } from '../src/server.js';

export const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

export interface Fixture {
  dir: string;
  config: LogsConfig;
  /** The change hub the sessions share (the server gets it beside its config). */
  changes: ChangeHub;
  /** A session connected in process; closed by close(). */
  connect(options?: Parameters<typeof connectInProcess>[1]): Promise<TestSession>;
  file(name: string): string;
  write(name: string, text: string | Buffer): Promise<string>;
  writeGz(name: string, text: string): Promise<string>;
  close(): Promise<void>;
}

/** A temporary directory of logs, a config over it (or over `roots` inside it) and in-process sessions. */
export async function fixture(options: { roots?: (dir: string) => { directories?: string[]; files?: string[] }; limits?: Partial<LogsLimits>; config?: Partial<LogsConfig> } = {}): Promise<Fixture> {
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
  return {
    dir,
    config,
    changes,
    async connect(connectOptions) {
      const session = await connectInProcess(buildServer(config, { changes }), connectOptions);
      sessions.push(session);
      return session;
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
}

/** ISO 8601 (UTC) for a time `minutesAgo` before now, to the millisecond. */
export function isoAgo(minutesAgo: number, now = Date.now()): string {
  return new Date(now - minutesAgo * 60_000).toISOString();
}

/** Lines with a trailing newline. */
export function lines(...ls: string[]): string {
  return ls.map((l) => `${l}\n`).join('');
}
