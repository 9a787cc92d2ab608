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
}
