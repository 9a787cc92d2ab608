#!/usr/bin/env node
import { ChangeHub, integerFlag, runServer, UsageError } from '@suite/shared';
import { DEFAULT_LIMITS, SqliteDatabase, VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-sqlite',
  packageName: '@suite/server-sqlite',
  version: VERSION,
  description: 'query a SQLite database, read-only unless you allow writes',
  usage: '[--allow-write] PATH.db | --demo [--database NAME=PATH ...]',
  writes: 'read-only',
  flags: {
    demo: { type: 'boolean', description: 'Serve an embedded sample database (a small shop) instead of a file.' },
    timeout: { type: 'string', valueName: 'SECONDS', description: `Time limit of one query (default ${DEFAULT_LIMITS.timeoutMs / 1000}); calls may ask for less.` },
    'max-rows': { type: 'string', valueName: 'N', description: `Rows a query returns by default (default ${DEFAULT_LIMITS.defaultMaxRows}, at most ${DEFAULT_LIMITS.hardMaxRows}).` },
    workers: { type: 'string', valueName: 'N', description: 'Query processes that may run at once (default 2).' },
    'allow-attach': { type: 'boolean', description: 'With --allow-write: let write_query run ATTACH/DETACH (other files become reachable).' },
    'allow-vacuum-into': { type: 'boolean', description: 'With --allow-write: let write_query run VACUUM INTO (writes a copy to any path).' },
    database: {
      type: 'string',
      multiple: true,
      valueName: 'NAME=PATH',
      description: 'One more database file, by name (repeatable); tools then take "database" (default: the PATH.db argument, else the first of these).',
    },
    'read-only-database': { type: 'string', multiple: true, valueName: 'NAME', description: 'Keep this named database read-only even with --allow-write (repeatable).' },
    'load-extension': { type: 'string', multiple: true, valueName: 'PATH', description: 'With --allow-write: load this SQLite extension into every connection (repeatable).' },
  },
  positionals: { name: 'PATH.db', min: 0, max: 1 },
  examples: ['mcp-server-sqlite ~/data/sales.db', 'mcp-server-sqlite --database sales=./sales.db --database hr=./hr.db', 'mcp-server-sqlite --allow-write --timeout 10 ./scratch.db', 'mcp-server-sqlite --demo'],
  async prepare({ flags, positionals, selection }, log) {
    const demo = flags.demo === true;
    if (demo && positionals.length > 0) throw new UsageError('Give either a database file or --demo, not both.');
    const named = (flags.database ?? []).map((value) => {
      const match = /^([A-Za-z_][A-Za-z0-9_-]{0,62})=(.+)$/s.exec(value);
      if (!match) throw new UsageError(`--database takes NAME=PATH (a name of letters, digits, _ and -), got ${JSON.stringify(value)}.`);
      return { name: match[1]!, file: match[2]! };
    });
    if (!demo && positionals.length === 0 && named.length === 0) throw new UsageError('Missing PATH.db (or use --demo to try the sample database).');
    // --allow-write also opens the file writable; without it the file is opened read-only.
    const allowWrite = selection.readOnly === false;
    const extensions = flags['load-extension'] ?? [];
    for (const [flag, given] of [['allow-attach', flags['allow-attach'] === true], ['allow-vacuum-into', flags['allow-vacuum-into'] === true], ['load-extension', extensions.length > 0]] as const) {
      if (given && !allowWrite) throw new UsageError(`--${flag} only applies with --allow-write (a read-only server never allows it).`);
    }
    const timeoutSeconds = integerFlag(flags.timeout, 'timeout', DEFAULT_LIMITS.timeoutMs / 1000, { min: 1, max: 86_400 });
    const maxRows = integerFlag(flags['max-rows'], 'max-rows', DEFAULT_LIMITS.defaultMaxRows, { min: 1, max: DEFAULT_LIMITS.hardMaxRows });
    const workers = integerFlag(flags.workers, 'workers', 2, { min: 1, max: 16 });
    const entries: { name: string; file?: string; demo?: boolean }[] = [];
    if (demo) entries.push({ name: 'demo', demo: true });
    else if (positionals.length > 0) entries.push({ name: 'default', file: positionals[0]! });
    for (const entry of named) {
      if (entries.some((e) => e.name === entry.name)) throw new UsageError(`--database ${entry.name}: the name is given twice.`);
      entries.push(entry);
    }
    const readOnlyNames = flags['read-only-database'] ?? [];
    for (const name of readOnlyNames) {
      if (!entries.some((e) => e.name === name)) throw new UsageError(`--read-only-database ${name}: no database has that name (configured: ${entries.map((e) => e.name).join(', ')}).`);
    }
    const several = entries.length > 1;
    const configs = new Map<string, { database: SqliteDatabase; databases?: ReadonlyMap<string, { database: SqliteDatabase }> }>();
    try {
      for (const entry of entries) {
        const writable = allowWrite && !readOnlyNames.includes(entry.name);
        const database = await SqliteDatabase.open({
          ...(entry.demo ? { demo: true } : { file: entry.file! }),
          ...(several ? { name: entry.name } : {}),
          allowWrite: writable,
          allowAttach: writable && flags['allow-attach'] === true,
          allowVacuumInto: writable && flags['allow-vacuum-into'] === true,
          extensions,
          workers,
          limits: { timeoutMs: timeoutSeconds * 1000, defaultMaxRows: maxRows },
          log,
          warmInBackground: true,
        });
        configs.set(entry.name, { database });
      }
    } catch (error) {
      for (const c of configs.values()) await c.database.close();
      throw error;
    }
    if (several) for (const c of configs.values()) c.databases = configs;
    const config = configs.values().next().value!;
    const changes = new ChangeHub();
    return {
      createSession: (session) => buildServer(config, { session, changes }),
      close: async () => {
        await changes.close();
        for (const c of configs.values()) await c.database.close();
      },
    };
  },
});
