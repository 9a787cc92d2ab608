#!/usr/bin/env node
import { ChangeHub, integerFlag, resolveCliDirectories, runServer, sweepJournaledTempFiles, tempJournalDirectories, tempJournalUsable, UsageError } from '@suite/shared';
import { DEFAULT_LIMITS, VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-filesystem',
  packageName: '@suite/server-filesystem',
  version: VERSION,
  description: 'read, search and edit files inside the directories you allow',
  usage: '[--read-only] [--read-timeout SECONDS] [DIR...]',
  writes: 'writes',
  flags: {
    'read-timeout': {
      type: 'string',
      valueName: 'SECONDS',
      description: `Stop a read or search call that runs longer than this, with an error (default ${DEFAULT_LIMITS.readTimeoutMs / 1000}).`,
    },
  },
  positionals: { name: 'DIR', min: 0 },
  examples: ['mcp-server-filesystem ~/code ~/notes', 'mcp-server-filesystem --read-only ~/code', 'mcp-server-filesystem --http --port 3001 ~/code'],
  async prepare({ flags, positionals, selection }, log) {
    let directories: string[];
    try {
      directories = await resolveCliDirectories(positionals);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const readTimeoutSeconds = integerFlag(flags['read-timeout'], 'read-timeout', DEFAULT_LIMITS.readTimeoutMs / 1000, { min: 1, max: 3600 });
    const changes = new ChangeHub();
    const limits = { ...DEFAULT_LIMITS, readTimeoutMs: readTimeoutSeconds * 1000 };
    const config = { directories, aliases: positionals, readOnly: selection.readOnly === true, limits };
    // In the background: a crash (kill -9, power loss) can leave temporary files of a write behind; they are
    // hidden from every listing, and removed here once their owner is gone. Only the directories dead
    // writers journaled are read, never the whole tree, and start-up does not wait for it.
    void (async () => {
      await sweepJournaledTempFiles({ log });
      if (!config.readOnly && !(await tempJournalUsable())) {
        log.private('warning', `cannot write the temporary-file journal (${tempJournalDirectories().join(' or ')}): a write killed mid-way leaves a hidden temporary file the next start will not remove. Set SUITE_STATE_DIR to a writable directory.`);
      }
    })().catch((error: unknown) => log.private('warning', `temporary-file sweep failed: ${String(error)}`));
    return { createSession: (session) => buildServer(config, { session, changes }), close: () => changes.close() };
  },
});
