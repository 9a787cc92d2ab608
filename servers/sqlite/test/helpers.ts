import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from '../src/sqlite-addon.js';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, makeTempDir, type TestSession } from '@suite/test-kit';
import { SqliteDatabase, buildServer, type SqliteOptions } from '../src/server.js';

export const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

/** A real database file in a fresh temporary directory, with a few rows of every type. */
export async function makeDatabaseFile(setupSql = SAMPLE_SQL, name = 'sample.db'): Promise<{ dir: string; file: string; cleanup: () => Promise<void> }> {
  const { dir, cleanup } = await makeTempDir('sqlite-test-');
  const file = path.join(dir, name);
  const db = new Database(file);
  db.exec(setupSql);
  db.close();
  return { dir, file, cleanup };
}

export const SAMPLE_SQL = `
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE, team_id INTEGER REFERENCES teams(id) ON DELETE SET NULL, score REAL DEFAULT 0);
CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE INDEX people_by_team ON people(team_id, name);
CREATE VIEW team_sizes AS SELECT team_id, count(*) AS n FROM people GROUP BY team_id;
INSERT INTO teams VALUES (1, 'core'), (2, 'docs');
INSERT INTO people VALUES (1, 'Ada', 'ada@example.com', 1, 9.5), (2, 'Grace', 'grace@example.com', 1, 8), (3, 'Edsger', NULL, 2, 7.25);
`;

export { snapshotTree, waitUntil } from '@suite/test-kit';

export interface Harness {
  session: TestSession;
  database: SqliteDatabase;
  hub: ChangeHub;
  close: () => Promise<void>;
}

/** The server in-process, through the real protocol, on a database file. */
export async function openServer(options: SqliteOptions): Promise<Harness> {
  const database = await SqliteDatabase.open({ workers: 2, ...options });
  const hub = new ChangeHub({ debounceMs: 100 });
  const session = await connectInProcess(buildServer({ database }, { changes: hub }));
  return {
    session,
    database,
    hub,
    close: async () => {
      await session.close();
      await hub.close();
      await database.close();
    },
  };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A recursive CTE that keeps SQLite busy inside one step for many seconds. */
export const LONG_QUERY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c';

/**
 * Repeats a change until the session hears about it. File watchers start asynchronously, so a
 * single write right after subscribing could land before the watch is in place on a loaded
 * machine; repeating keeps the test about delivery, not about a race with watcher start-up.
 */
export async function untilUpdated(session: TestSession, uri: string, change: (attempt: number) => Promise<void> | void, timeoutMs = 20_000): Promise<void> {
  let heard = false;
  const waiting = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, timeoutMs).then(() => {
    heard = true;
  });
  const end = Date.now() + timeoutMs;
  for (let attempt = 0; !heard && Date.now() < end; attempt++) {
    await change(attempt);
    await Promise.race([waiting, new Promise((r) => setTimeout(r, 1000))]);
  }
  await waiting;
}
