#!/usr/bin/env node
import { ChangeHub, Logger, UsageError, integerFlag, redactSecrets, runServer } from '@suite/shared';
import { DEFAULT_LIMITS, type PostgresLimits } from './config.js';
import { Database } from './database.js';
import { ChannelListener } from './listener.js';
import { PRIVILEGED_FLAG, inspectRole, privilegeProblem, refusalMessage } from './privileges.js';
import { VERSION, buildServer } from './server.js';

/** The libpq variables that say which server or database to use; any one of them is a choice made. */
const LOCATING_VARIABLES = ['PGHOST', 'PGHOSTADDR', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGSERVICE'];

await runServer({
  bin: 'mcp-server-postgres',
  packageName: '@suite/server-postgres',
  version: VERSION,
  description: 'query and inspect a PostgreSQL database, read-only unless told otherwise',
  usage: '[--allow-write] [options] [postgresql://user@host:port/database]',
  writes: 'read-only',
  flags: {
    'statement-timeout': { type: 'string', valueName: 'MS', description: `Server-side statement_timeout (default ${DEFAULT_LIMITS.statementTimeoutMs}).` },
    'lock-timeout': { type: 'string', valueName: 'MS', description: `Server-side lock_timeout (default ${DEFAULT_LIMITS.lockTimeoutMs}).` },
    'idle-in-transaction-timeout': {
      type: 'string',
      valueName: 'MS',
      description: `Server-side idle_in_transaction_session_timeout (default ${DEFAULT_LIMITS.idleInTransactionTimeoutMs}).`,
    },
    'max-rows': { type: 'string', valueName: 'N', description: `Rows per result before it is truncated (default ${DEFAULT_LIMITS.maxRows}).` },
    'max-result-bytes': { type: 'string', valueName: 'BYTES', description: `JSON size of the rows per result before it is truncated (default ${DEFAULT_LIMITS.maxBytes}, at most 3 MiB).` },
    [PRIVILEGED_FLAG]: {
      type: 'boolean',
      description: 'Run read-only mode as a superuser or server-file role anyway. UNSAFE: such roles can run programs and read files on the server.',
    },
  },
  positionals: { name: 'DATABASE_URL', min: 0, max: 1 },
  environment: [
    { name: 'DATABASE_URL', description: 'Connection URL when none is given on the command line.' },
    { name: 'PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD', description: 'Standard libpq variables, used for whatever the URL leaves out.' },
  ],
  examples: [
    'mcp-server-postgres postgresql://mcp_readonly@localhost/shop',
    'mcp-server-postgres --allow-write postgresql://app@db.internal:5432/shop',
    'PGHOST=localhost PGDATABASE=shop PGUSER=mcp_readonly mcp-server-postgres',
  ],
  async prepare({ flags, positionals, selection }, log: Logger) {
    const connectionString = positionals[0] || process.env.DATABASE_URL || undefined;
    // With nothing to go on, pg would try localhost as the login user (or as nobody, where USER is
    // unset) and fail with a protocol message; say what to give instead.
    if (connectionString === undefined && !LOCATING_VARIABLES.some((name) => process.env[name])) {
      throw new UsageError('Missing DATABASE_URL: give a postgresql:// URL, e.g. postgresql://mcp_readonly@localhost:5432/shop (or set DATABASE_URL, or PGHOST, PGDATABASE and PGUSER).');
    }
    if (connectionString !== undefined && !/^postgres(ql)?:\/\//i.test(connectionString)) {
      throw new UsageError(`The database URL must start with postgresql:// or postgres://, got ${JSON.stringify(redactSecrets(connectionString))}.`);
    }
    const limits: PostgresLimits = {
      statementTimeoutMs: integerFlag(flags['statement-timeout'], 'statement-timeout', DEFAULT_LIMITS.statementTimeoutMs, { min: 1, max: 24 * 3600 * 1000 }),
      lockTimeoutMs: integerFlag(flags['lock-timeout'], 'lock-timeout', DEFAULT_LIMITS.lockTimeoutMs, { min: 1, max: 24 * 3600 * 1000 }),
      idleInTransactionTimeoutMs: integerFlag(flags['idle-in-transaction-timeout'], 'idle-in-transaction-timeout', DEFAULT_LIMITS.idleInTransactionTimeoutMs, {
        min: 1000,
        max: 24 * 3600 * 1000,
      }),
      maxRows: integerFlag(flags['max-rows'], 'max-rows', DEFAULT_LIMITS.maxRows, { min: 1, max: 100_000 }),
      maxBytes: integerFlag(flags['max-result-bytes'], 'max-result-bytes', DEFAULT_LIMITS.maxBytes, { min: 1024, max: 3 * 1024 * 1024 }),
    };
    const allowWrite = selection.readOnly === false;
    const database = new Database({ ...(connectionString ? { connectionString } : {}), readOnlySessions: !allowWrite, limits });
    const { host, port, database: name } = database.target;
    try {
      const role = await inspectRole(database);
      const problem = privilegeProblem(role);
      if (problem && !allowWrite) {
        if (!flags[PRIVILEGED_FLAG]) throw new Error(refusalMessage(problem, name, role.serverVersionNum));
        log.warning(`UNSAFE: running read-only as a privileged role (${problem}) because --${PRIVILEGED_FLAG} was given.`);
      }
      log.info(`connected to ${host}:${port}/${name} as ${role.user} (${allowWrite ? 'read-write' : 'read-only'})`);
    } catch (error) {
      await database.close();
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(database.redact(message.startsWith('Refusing') ? message : `cannot connect to ${host}:${port}/${name}: ${message}`));
    }
    const changes = new ChangeHub({ log: log.child('changes') });
    const listener = new ChannelListener(database, log.child('listen'));
    const config = { database, allowWrite, limits, listener };
    return {
      createSession: (session) => buildServer(config, { session, changes }),
      close: async () => {
        await changes.close();
        await listener.close();
        await database.close();
      },
    };
  },
});
