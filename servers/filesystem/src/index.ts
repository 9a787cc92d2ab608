#!/usr/bin/env node
import { ChangeHub, resolveCliDirectories, runServer, UsageError } from '@suite/shared';
import { DEFAULT_LIMITS, VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-filesystem',
  packageName: '@suite/server-filesystem',
  version: VERSION,
  description: 'read, search and edit files inside the directories you allow',
  usage: '[--read-only] [DIR...]',
  writes: 'writes',
  flags: {},
  positionals: { name: 'DIR', min: 0 },
  examples: ['mcp-server-filesystem ~/code ~/notes', 'mcp-server-filesystem --read-only ~/code', 'mcp-server-filesystem --http --port 3001 ~/code'],
  async prepare({ positionals, selection }) {
    let directories: string[];
    try {
      directories = await resolveCliDirectories(positionals);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const changes = new ChangeHub();
    const config = { directories, aliases: positionals, readOnly: selection.readOnly === true, changes, limits: DEFAULT_LIMITS };
    return { createSession: (session) => buildServer(config, session), close: () => changes.close() };
  },
});
