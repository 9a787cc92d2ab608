import path from 'node:path';
import Database from '../src/sqlite-addon.js';
import { expect } from 'vitest';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { BIN, SAMPLE_SQL, makeDatabaseFile } from './helpers.js';

const ROWS_PER_INSERT = 100_000;
const BULK_INSERT = `INSERT INTO bulk (n, pad) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS_PER_INSERT}) SELECT x, hex(randomblob(48)) FROM c`;

/** The SQLite server on a database file of its own, with --allow-write so the write tools are fuzzed too. */
export const target: ConformanceTarget = {
  name: 'sqlite',
  bin: BIN,
  async prepare() {
    const { dir, file, cleanup } = await makeDatabaseFile(`${SAMPLE_SQL}\nCREATE TABLE bulk (n INTEGER, pad TEXT);`);
    return {
      args: ['--allow-write', file],
      cheapCall: { name: 'read_query', arguments: { query: 'SELECT 1 AS one' } },
      followed: {
        uri: 'sqlite://sample/tables/people',
        // Another process writes the table, as an application beside the server would.
        change: async (round) => {
          const other = new Database(file);
          try {
            other.prepare('INSERT INTO people (name) VALUES (?)').run(`followed ${round}`);
          } finally {
            other.close();
          }
        },
        refused: ['sqlite://sample/tables/no_such_table', 'nothing://at/all'],
      },
      allowedPaths: [dir],
      samples: [
        'people', 'teams', 'team_sizes', 'bulk', 'sqlite_master', 'main.people',
        'SELECT * FROM people', 'SELECT name FROM people WHERE id = ?', 'SELECT * FROM people WHERE name = :name', 'SELECT count(*) FROM bulk',
        'INSERT INTO teams (name) VALUES (?)', 'UPDATE people SET score = score + 1 WHERE id = ?', 'DELETE FROM bulk WHERE n > 10',
        'CREATE TABLE fuzz_t (a TEXT, b INTEGER)', 'CREATE TABLE IF NOT EXISTS "odd name" (x)', 'PRAGMA table_info(people)', 'EXPLAIN QUERY PLAN SELECT * FROM people',
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c', 'SELECT zeroblob(1000000000)', 'SELECT load_extension(\'/tmp/x\')',
        path.join(dir, 'other.db'),
      ],
      namedSamples: {
        table_name: ['people', 'teams', 'team_sizes', 'bulk', 'sqlite_master', 'main.people'],
        query: ['SELECT * FROM people', 'SELECT name, score FROM people WHERE team_id = ?', 'SELECT * FROM people WHERE name = :name', 'INSERT INTO teams (name) VALUES (?)', 'UPDATE people SET score = ? WHERE id = ?', 'CREATE TABLE t_fuzz (a, b)', 'DELETE FROM teams WHERE id = ?', 'SELECT * FROM bulk LIMIT ?'],
        sql: ['SELECT * FROM teams', 'SELECT ?'],
        params: [[1], ['Ada'], { name: 'Ada' }, [1, 2], []],
      },
      inFlight: {
        // Each insert is one statement: after the signal, the table holds whole inserts or none.
        calls: Array.from({ length: 6 }, () => ({ name: 'write_query', arguments: { query: BULK_INSERT } })),
        directories: [dir],
        async check(answered) {
          const db = new Database(file, { readonly: true });
          try {
            expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
            const { n } = db.prepare('SELECT count(*) AS n FROM bulk').get() as { n: number };
            // Whole inserts only, and at least every insert reported done.
            expect(n % ROWS_PER_INSERT).toBe(0);
            expect(n).toBeGreaterThanOrEqual(answered.filter((a) => a?.result && a.result.isError !== true).length * ROWS_PER_INSERT);
          } finally {
            db.close();
          }
        },
      },
      fuzz: { numRuns: 300 },
      cleanup,
    };
  },
};
