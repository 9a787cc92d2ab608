#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { TOOLSETS } from './config.js';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-template-check',
  packageName: '@suite/server-template-check',
  version: VERSION,
  description: 'A scaffolded server, built and tested by CI',
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
