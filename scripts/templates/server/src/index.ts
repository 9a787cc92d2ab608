#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { TOOLSETS } from './config.js';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-__NAME__',
  packageName: '@suite/server-__NAME__',
  version: VERSION,
  description: '__DESCRIPTION__',
  usage: '[--read-only] [--toolsets LIST] [--uppercase]',
  writes: 'writes',
  toolsets: TOOLSETS,
  flags: {
    uppercase: { type: 'boolean', description: 'Answer in capitals (an example of a server-specific flag).' },
  },
  async prepare({ flags, selection }) {
    const config = { uppercase: flags.uppercase === true, notes: [] };
    return { createSession: (session) => buildServer(config, selection, session) };
  },
});
