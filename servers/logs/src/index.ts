#!/usr/bin/env node
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ChangeHub, UsageError, runServer } from '@suite/shared';
import { DEFAULT_LIMITS, DEFAULT_JSON_FIELDS, VERSION, buildServer, type LogsConfig } from './server.js';

/** Splits the command line's paths into directories and log files (real paths), refusing anything else. */
async function resolvePaths(positionals: readonly string[]): Promise<{ directories: string[]; files: string[] }> {
  const directories: string[] = [];
  const files: string[] = [];
  for (const given of positionals) {
    const expanded = given === '~' || given.startsWith('~/') ? path.join(process.env.HOME ?? '', given.slice(1)) : given;
    let real: string;
    try {
      real = await realpath(path.resolve(expanded));
    } catch {
      throw new UsageError(`Not found: ${given}`);
    }
    const info = await stat(real);
    if (info.isDirectory()) {
      if (!directories.includes(real)) directories.push(real);
    } else if (info.isFile()) {
      if (!files.includes(real)) files.push(real);
    } else throw new UsageError(`Not a directory or a regular file: ${given}`);
  }
  return { directories, files };
}

function checkEntryPattern(pattern: string | undefined): string | undefined {
  if (pattern === undefined) return undefined;
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new UsageError(`--entry-pattern is not a valid regular expression: ${(error as Error).message}`);
  }
  return pattern;
}

await runServer({
  bin: 'mcp-server-logs',
  packageName: '@suite/server-logs',
  version: VERSION,
  description: 'read, tail, search and follow the log files in the directories (or the files) you allow',
  usage: '[options] [DIR_OR_FILE...]',
  flags: {
    'json-time-field': { type: 'string', valueName: 'NAME', description: `JSON lines: the field holding the time (default: the first of ${DEFAULT_JSON_FIELDS.time.slice(0, 4).join(', ')}, …).` },
    'json-level-field': { type: 'string', valueName: 'NAME', description: `JSON lines: the field holding the level (default: ${DEFAULT_JSON_FIELDS.level.slice(0, 4).join(', ')}, …).` },
    'json-message-field': { type: 'string', valueName: 'NAME', description: `JSON lines: the field holding the message (default: ${DEFAULT_JSON_FIELDS.message.slice(0, 4).join(', ')}, …).` },
    'entry-pattern': { type: 'string', valueName: 'REGEX', description: 'Where a multi-line entry starts (a line matching it), instead of each format\'s rule (a line with a timestamp).' },
    'refuse-hard-links': { type: 'boolean', description: 'Refuse log files with more than one hard link (a hard link in an allowed directory may name a file outside it).' },
  },
  positionals: { name: 'DIR_OR_FILE', min: 0 },
  examples: [
    'mcp-server-logs /var/log/myapp',
    'mcp-server-logs /var/log/syslog /var/log/nginx',
    'mcp-server-logs --json-level-field severity ~/services/api/logs',
    'mcp-server-logs --http --port 3001 /var/log/myapp',
  ],
  async prepare({ flags, positionals }) {
    const { directories, files } = await resolvePaths(positionals);
    const changes = new ChangeHub();
    const field = (name: string | undefined, defaults: readonly string[]): readonly string[] => (name ? [name] : defaults);
    const entryPattern = checkEntryPattern(flags['entry-pattern']);
    const config: LogsConfig = {
      directories,
      files,
      aliases: positionals,
      json: {
        time: field(flags['json-time-field'], DEFAULT_JSON_FIELDS.time),
        level: field(flags['json-level-field'], DEFAULT_JSON_FIELDS.level),
        message: field(flags['json-message-field'], DEFAULT_JSON_FIELDS.message),
      },
      ...(entryPattern !== undefined ? { entryPattern } : {}),
      ...(flags['refuse-hard-links'] ? { refuseHardLinks: true } : {}),
      limits: DEFAULT_LIMITS,
      formatCache: new Map(),
    };
    return { createSession: (session) => buildServer(config, { session, changes }), close: () => changes.close() };
  },
});
