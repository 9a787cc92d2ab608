import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, makeTempDir, type ClientOptions, type TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS, type FilesystemConfig, type FilesystemLimits } from '../src/config.js';
import { buildServer } from '../src/server.js';

/**
 * The full server (write tools and resources included) over the in-process transport.
 *
 * Layout under a fresh temporary `base`: `root` is the allowed directory; `outside` and
 * `root-evil` (a prefix sibling) are not. Tests add `extraRoots` for cross-device moves.
 */
export interface WriteSideHarness {
  base: string;
  dir: string;
  outside: string;
  sibling: string;
  changes: ChangeHub;
  config: FilesystemConfig;
  session: TestSession;
  /** Opens another session on the same process-wide config (and change hub). */
  connect(client?: ClientOptions): Promise<TestSession>;
  close(): Promise<void>;
}

export async function startWriteSide(
  options: { limits?: Partial<FilesystemLimits>; client?: ClientOptions; extraRoots?: string[]; debounceMs?: number } = {},
): Promise<WriteSideHarness> {
  const temp = await makeTempDir('fs-write-');
  const dir = path.join(temp.dir, 'root');
  const outside = path.join(temp.dir, 'outside');
  const sibling = path.join(temp.dir, 'root-evil');
  await Promise.all([mkdir(dir), mkdir(outside), mkdir(sibling)]);
  const changes = new ChangeHub({ debounceMs: options.debounceMs ?? 100 });
  const directories = [dir, ...(options.extraRoots ?? [])];
  const config: FilesystemConfig = {
    directories,
    aliases: directories,
    readOnly: false,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  };
  const sessions: TestSession[] = [];
  const connect = async (client?: ClientOptions): Promise<TestSession> => {
    const session = await connectInProcess(buildServer(config, { changes }), client ?? options.client ?? {});
    sessions.push(session);
    return session;
  };
  const session = await connect();
  return {
    base: temp.dir,
    dir,
    outside,
    sibling,
    changes,
    config,
    session,
    connect,
    close: async () => {
      for (const s of sessions) await s.close().catch(() => undefined);
      await changes.close();
      await temp.cleanup();
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
