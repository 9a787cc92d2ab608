#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-__NAME__',
  packageName: '@suite/server-__NAME__',
  version: VERSION,
  description: '__DESCRIPTION__',
  usage: '[--uppercase]',
  flags: {
    uppercase: { type: 'boolean', description: 'Answer in capitals (an example of a server-specific flag).' },
  },
  async prepare({ flags }) {
    const config = { uppercase: flags.uppercase === true };
    return { createSession: () => buildServer(config) };
  },
});
