import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Real systemd journal files for tests and benchmarks: entries in journald's export format, turned
 * into a journal file by systemd-journal-remote (Debian's systemd-journal-remote package). Writing
 * to an existing file appends to it, as journald does, so a test can add entries while a server
 * follows the journal.
 */

const CANDIDATES = ['/lib/systemd/systemd-journal-remote', '/usr/lib/systemd/systemd-journal-remote'];

/** The systemd-journal-remote binary, or undefined when it is not installed. */
export function journalRemote(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

export interface JournalTestEntry {
  /** Microseconds since the epoch (__REALTIME_TIMESTAMP). */
  micros: number;
  /** 32 hex digits. */
  boot: string;
  unit?: string;
  /** 0 (emergency) .. 7 (debug). */
  priority?: number;
  identifier?: string;
  pid?: number;
  /** Text, or bytes (written in the export format's binary form). */
  message: string | Buffer;
  fields?: Record<string, string | Buffer>;
}

/** A random boot id, as journald writes them. */
export function bootId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function field(name: string, value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  // The text form cannot hold a newline; the binary form (name, newline, 64-bit little-endian size, bytes) holds anything.
  if (!bytes.includes(0x0a)) return Buffer.concat([Buffer.from(`${name}=`), bytes, Buffer.from('\n')]);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(bytes.length));
  return Buffer.concat([Buffer.from(`${name}\n`), size, bytes, Buffer.from('\n')]);
}

/** Entries in journald's export format. */
export function exportFormat(entries: readonly JournalTestEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(field('__REALTIME_TIMESTAMP', String(e.micros)), field('__MONOTONIC_TIMESTAMP', String(e.micros)), field('_BOOT_ID', e.boot));
    if (e.unit !== undefined) parts.push(field('_SYSTEMD_UNIT', e.unit));
    if (e.priority !== undefined) parts.push(field('PRIORITY', String(e.priority)));
    parts.push(field('SYSLOG_IDENTIFIER', e.identifier ?? e.unit?.replace(/\.service$/, '') ?? 'test'));
    parts.push(field('_PID', String(e.pid ?? 4242)), field('_HOSTNAME', 'testhost'), field('_TRANSPORT', 'journal'));
    for (const [name, value] of Object.entries(e.fields ?? {})) parts.push(field(name, value));
    parts.push(field('MESSAGE', e.message), Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

/** Writes (or appends) entries to a journal file (its name must end in .journal). */
export async function writeJournal(file: string, entries: readonly JournalTestEntry[]): Promise<void> {
  const remote = journalRemote();
  if (!remote) throw new Error('systemd-journal-remote is not installed (apt-get install systemd-journal-remote)');
  await new Promise<void>((resolve, reject) => {
    const child = execFile(remote, [`--output=${file}`, '-'], { maxBuffer: 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`systemd-journal-remote failed: ${stderr || error.message}`));
      else resolve();
    });
    child.stdin?.end(exportFormat(entries));
  });
}
