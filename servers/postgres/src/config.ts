import type { Database } from './database.js';
import type { ChannelListener } from './listener.js';
import type { PostgresLimits } from './limits.js';

export { DEFAULT_LIMITS, type PostgresLimits } from './limits.js';

/** Everything the server is configured with, shared by all sessions of one process. */
export interface PostgresConfig {
  database: Database;
  /** With --allow-write, the execute tool is registered. */
  allowWrite: boolean;
  limits: PostgresLimits;
  /** The process-wide LISTEN connection. */
  listener: ChannelListener;
  /**
   * With --database NAME=URL: every configured database by name, the default first, each a
   * config of its own (pool, mode, limits, LISTEN connection); this config is the default's.
   */
  databases?: ReadonlyMap<string, PostgresConfig>;
  /** The database's name among several (set only when several are configured). */
  name?: string;
}
