#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { TOOLSETS } from './config.js';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-logs',
  packageName: '@suite/server-logs',
  version: VERSION,
  description: 'MCP server for log files: live resources, a fast tail, streaming search over huge and rotated files, and subscriptions that follow appends',
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
