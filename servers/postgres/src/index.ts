#!/usr/bin/env node
import { ChangeHub, Logger, UsageError, integerFlag, redactSecrets, runServer } from '@suite/shared';
import { DEFAULT_LIMITS, type PostgresConfig, type PostgresLimits } from './config.js';
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
  usage: '[--allow-write] [options] [postgresql://user@host:port/database] [--database NAME=URL ...]',
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
    database: {
      type: 'string',
      multiple: true,
      valueName: 'NAME=URL',
      description: 'One more database, by name (repeatable); tools then take "database" (default: the DATABASE_URL argument, else the first of these).',
    },
    'read-only-database': {
      type: 'string',
      multiple: true,
      valueName: 'NAME',
      description: 'Keep this named database read-only even with --allow-write (repeatable).',
    },
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
    'mcp-server-postgres --database shop=postgresql://ro@db/shop --database audit=postgresql://ro@db/audit',
  ],
  async prepare({ flags, positionals, selection }, log: Logger) {
    const named = parseNamedDatabases(flags.database ?? []);
    const positional = positionals[0] || process.env.DATABASE_URL || undefined;
    const entries: { name: string; connectionString: string | undefined }[] = [];
    // With nothing to go on, pg would try localhost as the login user (or as nobody, where USER is
    // unset) and fail with a protocol message; say what to give instead.
    if (positional !== undefined || named.length === 0) {
      if (positional === undefined && !LOCATING_VARIABLES.some((name) => process.env[name])) {
        throw new UsageError('Missing DATABASE_URL: give a postgresql:// URL, e.g. postgresql://mcp_readonly@localhost:5432/shop (or set DATABASE_URL, or PGHOST, PGDATABASE and PGUSER, or give --database NAME=URL).');
      }
      entries.push({ name: 'default', connectionString: positional });
    }
    for (const entry of named) {
      if (entries.some((e) => e.name === entry.name)) throw new UsageError(`--database ${entry.name}: the name is given twice${entry.name === 'default' ? ' (default is the DATABASE_URL argument)' : ''}.`);
      entries.push(entry);
    }
    for (const { connectionString } of entries) {
      if (connectionString !== undefined && !/^postgres(ql)?:\/\//i.test(connectionString)) {
        throw new UsageError(`The database URL must start with postgresql:// or postgres://, got ${JSON.stringify(redactSecrets(connectionString))}.`);
      }
    }
    const readOnlyNames = flags['read-only-database'] ?? [];
    for (const name of readOnlyNames) {
      if (!entries.some((e) => e.name === name)) throw new UsageError(`--read-only-database ${name}: no database has that name (configured: ${entries.map((e) => e.name).join(', ')}).`);
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
    const several = entries.length > 1;
    const configs = new Map<string, PostgresConfig>();
    const closeAll = async (): Promise<void> => {
      for (const config of configs.values()) {
        await config.listener.close();
        await config.database.close();
      }
    };
    try {
      for (const entry of entries) {
        const allowWrite = selection.readOnly === false && !readOnlyNames.includes(entry.name);
        const database = await connect(entry.connectionString, allowWrite, limits, flags[PRIVILEGED_FLAG] === true, several ? entry.name : undefined, log);
        const config: PostgresConfig = { database, allowWrite, limits, listener: new ChannelListener(database, log.child(several ? `listen ${entry.name}` : 'listen')), ...(several ? { name: entry.name } : {}) };
        configs.set(entry.name, config);
      }
      // Two names for one database would give two sets of resources under the same URIs.
      const targets = new Map<string, string>();
      for (const [name, config] of configs) {
        const { host, port, database } = config.database.target;
        const key = `${host}:${port}/${database}`;
        if (targets.has(key)) throw new UsageError(`--database ${name} and ${targets.get(key)} are the same database (${key}); give it once.`);
        targets.set(key, name);
      }
    } catch (error) {
      await closeAll();
      throw error;
    }
    const config = configs.values().next().value!;
    if (several) config.databases = configs;
    for (const each of configs.values()) if (several) each.databases = configs;
    const changes = new ChangeHub({ log: log.child('changes') });
    return {
      createSession: (session) => buildServer(config, { session, changes }),
      close: async () => {
        await changes.close();
        await closeAll();
      },
    };
  },
});

/** --database NAME=URL values: a name of letters, digits, _ and -, then the URL. */
function parseNamedDatabases(values: readonly string[]): { name: string; connectionString: string }[] {
  return values.map((value) => {
    const match = /^([A-Za-z_][A-Za-z0-9_-]{0,62})=(.+)$/s.exec(value);
    if (!match) throw new UsageError(`--database takes NAME=URL (a name of letters, digits, _ and -), got ${JSON.stringify(redactSecrets(value))}.`);
    return { name: match[1]!, connectionString: match[2]! };
  });
}

/** Opens one database's pool and checks its role (read-only mode refuses a privileged one). */
async function connect(connectionString: string | undefined, allowWrite: boolean, limits: PostgresLimits, privileged: boolean, name: string | undefined, log: Logger): Promise<Database> {
  const database = new Database({ ...(connectionString ? { connectionString } : {}), readOnlySessions: !allowWrite, limits });
  const { host, port, database: dbName } = database.target;
  const label = name === undefined ? '' : `${name}: `;
  try {
    const role = await inspectRole(database);
    const problem = privilegeProblem(role);
    if (problem && !allowWrite) {
      if (!privileged) throw new Error(refusalMessage(problem, dbName, role.serverVersionNum));
      log.warning(`${label}UNSAFE: running read-only as a privileged role (${problem}) because --${PRIVILEGED_FLAG} was given.`);
    }
    log.info(`${label}connected to ${host}:${port}/${dbName} as ${role.user} (${allowWrite ? 'read-write' : 'read-only'})`);
    return database;
  } catch (error) {
    await database.close();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(database.redact(`${label}${message.startsWith('Refusing') ? message : `cannot connect to ${host}:${port}/${dbName}: ${message}`}`));
  }
}
