#!/usr/bin/env node
import { runServer } from '@suite/shared';
import { TOOLSETS } from './config.js';
import { VERSION, buildServer } from './server.js';

await runServer({
  bin: 'mcp-server-git-prompts',
  packageName: '@suite/server-git-prompts',
  version: VERSION,
  description: 'Prompts for everyday git work (commit messages, reviews, PR descriptions, changelogs) built from the real repository, with completion, git:// resources and hardened git tools',
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
