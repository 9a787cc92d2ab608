#!/usr/bin/env node
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ChangeHub, UsageError, runServer } from '@suite/shared';
import { DEFAULT_LIMITS, DEFAULT_JSON_FIELDS, VERSION, buildServer, type JournalSource, type LogsConfig } from './server.js';

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

/** --journal and each --journal-dir (a directory that exists, by its real path). */
async function journalSources(system: boolean | undefined, dirs: readonly string[] | undefined): Promise<JournalSource[]> {
  const sources: JournalSource[] = system ? [{ kind: 'system' }] : [];
  for (const given of dirs ?? []) {
    let real: string;
    try {
      real = await realpath(path.resolve(given));
    } catch {
      throw new UsageError(`--journal-dir: not found: ${given}`);
    }
    if (!(await stat(real)).isDirectory()) throw new UsageError(`--journal-dir: not a directory: ${given}`);
    if (!sources.some((s) => s.kind === 'directory' && s.directory === real)) sources.push({ kind: 'directory', directory: real });
  }
  return sources;
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
    journal: { type: 'boolean', description: 'Read the systemd journal too (through journalctl: what the server\'s user may read), as logs://journal and logs://journal/<unit>.' },
    'journal-dir': { type: 'string', multiple: true, valueName: 'DIR', description: 'Read the journal files in DIR (copied from another host, say) as logs://journal; repeatable.' },
    'refuse-hard-links': { type: 'boolean', description: 'Refuse log files with more than one hard link (a hard link in an allowed directory may name a file outside it).' },
  },
  positionals: { name: 'DIR_OR_FILE', min: 0 },
  examples: [
    'mcp-server-logs /var/log/myapp',
    'mcp-server-logs /var/log/syslog /var/log/nginx',
    'mcp-server-logs --json-level-field severity ~/services/api/logs',
    'mcp-server-logs --journal /var/log/nginx',
    'mcp-server-logs --journal-dir /srv/host-b/journal',
    'mcp-server-logs --http --port 3001 /var/log/myapp',
  ],
  async prepare({ flags, positionals }) {
    const { directories, files } = await resolvePaths(positionals);
    const changes = new ChangeHub();
    const field = (name: string | undefined, defaults: readonly string[]): readonly string[] => (name ? [name] : defaults);
    const entryPattern = checkEntryPattern(flags['entry-pattern']);
    const journals = await journalSources(flags.journal, flags['journal-dir']);
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
      ...(journals.length > 0 ? { journals } : {}),
      limits: DEFAULT_LIMITS,
      formatCache: new Map(),
    };
    return { createSession: (session) => buildServer(config, { session, changes }), close: () => changes.close() };
  },
});
