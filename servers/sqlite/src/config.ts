import type { SqliteDatabase } from './database.js';

/** What every session of one process shares. */
export interface SqliteConfig {
  database: SqliteDatabase;
  /**
   * With --database NAME=PATH: every configured database by name, the default first, each a
   * config of its own (query processes, mode); this config is the default's.
   */
  databases?: ReadonlyMap<string, SqliteConfig>;
}
