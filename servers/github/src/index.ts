#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { TOOLSETS } from './config.js';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-github',
  packageName: '@suite/server-github',
  version: VERSION,
  description: 'MCP GitHub server: toolsets, a read-only mode that wins, a repository allowlist, Enterprise hosts, per-session tokens over HTTP and defenses against prompt injection',
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
