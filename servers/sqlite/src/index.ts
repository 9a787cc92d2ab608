#!/usr/bin/env node
import { ChangeHub, integerFlag, runServer, UsageError } from '@suite/shared';
import { DEFAULT_LIMITS, SqliteDatabase, VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-sqlite',
  packageName: '@suite/server-sqlite',
  version: VERSION,
  description: 'query a SQLite database, read-only unless you allow writes',
  usage: '[--allow-write] PATH.db | --demo',
  writes: 'read-only',
  flags: {
    demo: { type: 'boolean', description: 'Serve an embedded sample database (a small shop) instead of a file.' },
    timeout: { type: 'string', valueName: 'SECONDS', description: `Time limit of one query (default ${DEFAULT_LIMITS.timeoutMs / 1000}); calls may ask for less.` },
    'max-rows': { type: 'string', valueName: 'N', description: `Rows a query returns by default (default ${DEFAULT_LIMITS.defaultMaxRows}, at most ${DEFAULT_LIMITS.hardMaxRows}).` },
    workers: { type: 'string', valueName: 'N', description: 'Query processes that may run at once (default 2).' },
    'allow-attach': { type: 'boolean', description: 'With --allow-write: let write_query run ATTACH/DETACH (other files become reachable).' },
    'allow-vacuum-into': { type: 'boolean', description: 'With --allow-write: let write_query run VACUUM INTO (writes a copy to any path).' },
    'load-extension': { type: 'string', multiple: true, valueName: 'PATH', description: 'With --allow-write: load this SQLite extension into every connection (repeatable).' },
  },
  positionals: { name: 'PATH.db', min: 0, max: 1 },
  examples: ['mcp-server-sqlite ~/data/sales.db', 'mcp-server-sqlite --allow-write --timeout 10 ./scratch.db', 'mcp-server-sqlite --demo'],
  async prepare({ flags, positionals, selection }, log) {
    const demo = flags.demo === true;
    if (demo && positionals.length > 0) throw new UsageError('Give either a database file or --demo, not both.');
    if (!demo && positionals.length === 0) throw new UsageError('Missing PATH.db (or use --demo to try the sample database).');
    // --allow-write also opens the file writable; without it the file is opened read-only.
    const allowWrite = selection.readOnly === false;
    const extensions = flags['load-extension'] ?? [];
    for (const [flag, given] of [['allow-attach', flags['allow-attach'] === true], ['allow-vacuum-into', flags['allow-vacuum-into'] === true], ['load-extension', extensions.length > 0]] as const) {
      if (given && !allowWrite) throw new UsageError(`--${flag} only applies with --allow-write (a read-only server never allows it).`);
    }
    const timeoutSeconds = integerFlag(flags.timeout, 'timeout', DEFAULT_LIMITS.timeoutMs / 1000, { min: 1, max: 86_400 });
    const maxRows = integerFlag(flags['max-rows'], 'max-rows', DEFAULT_LIMITS.defaultMaxRows, { min: 1, max: DEFAULT_LIMITS.hardMaxRows });
    const workers = integerFlag(flags.workers, 'workers', 2, { min: 1, max: 16 });
    const database = await SqliteDatabase.open({
      ...(demo ? { demo: true } : { file: positionals[0]! }),
      allowWrite,
      allowAttach: flags['allow-attach'] === true,
      allowVacuumInto: flags['allow-vacuum-into'] === true,
      extensions,
      workers,
      limits: { timeoutMs: timeoutSeconds * 1000, defaultMaxRows: maxRows },
      log,
      warmInBackground: true,
    });
    const changes = new ChangeHub();
    const config = { database };
    return {
      createSession: (session) => buildServer(config, { session, changes }),
      close: async () => {
        await changes.close();
        await database.close();
      },
    };
  },
});
