import type { ChangeHub } from '@suite/shared';
import type { SqliteDatabase } from './database.js';

/** What every session of one process shares. */
export interface SqliteConfig {
  database: SqliteDatabase;
  /**
   * The process-wide change hub (resource subscriptions); omit to serve without subscriptions. Held
   * here because the server's own writes publish to it (append_insight, list_changed after DDL).
   */
  changes?: ChangeHub;
}
