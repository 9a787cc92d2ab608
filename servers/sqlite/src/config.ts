import type { SqliteDatabase } from './database.js';

/** What every session of one process shares. */
export interface SqliteConfig {
  database: SqliteDatabase;
}
