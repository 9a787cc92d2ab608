import { createGunzip } from 'node:zlib';
import { ToolError } from '@suite/shared';
import type { OpenedLog } from './access.js';
import { splitLines } from './chunks.js';
import type { LogsConfig } from './config.js';
import { SAMPLE_BYTES, detectFormat } from './formats/detect.js';
import type { FormatSpec, LogFormat } from './formats/parsers.js';

/**
 * What a log is: its format (recognised from its first lines, remembered per file identity so a
 * busy tail does not look again) and whether it is text at all.
 */

const CACHE_LIMIT = 1000;
/** A file this short may still change format as it grows (an empty log): it is looked at again next time. */
const MIN_CACHED_LINES = 5;

/** The first bytes of a log (decompressed for .gz), up to SAMPLE_BYTES. */
export async function sampleHead(log: OpenedLog): Promise<Buffer> {
  if (!log.compressed) {
    const buffer = Buffer.alloc(Math.min(SAMPLE_BYTES, log.size));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await log.handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }
  // Decompress only as much as the sample needs, then stop the stream.
  const compressed = Buffer.alloc(Math.min(64 * 1024, log.size));
  const { bytesRead } = await log.handle.read(compressed, 0, compressed.length, 0);
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let total = 0;
    const gunzip = createGunzip();
    const done = (): void => {
      gunzip.removeAllListeners();
      gunzip.on('error', () => undefined);
      gunzip.destroy();
      resolve(Buffer.concat(parts).subarray(0, SAMPLE_BYTES));
    };
    gunzip.on('data', (chunk: Buffer) => {
      parts.push(chunk);
      total += chunk.length;
      if (total >= SAMPLE_BYTES) done();
    });
    gunzip.on('end', done);
    // A truncated or corrupt stream still gives what decompressed so far.
    gunzip.on('error', done);
    gunzip.end(compressed.subarray(0, bytesRead));
  });
}

export interface Inspection {
  spec: FormatSpec;
  /** NUL bytes near the start: not a text log. */
  binary: boolean;
}

export function isBinary(sample: Buffer): boolean {
  return sample.subarray(0, 8192).includes(0);
}

export async function inspectLog(log: OpenedLog, config: LogsConfig): Promise<Inspection> {
  const key = `${log.dev}:${log.ino}:${log.real}`;
  const spec = (format: LogFormat): FormatSpec => ({
    format,
    json: config.json,
    reference: log.mtimeMs,
    ...(config.entryPattern !== undefined ? { entryPattern: config.entryPattern } : {}),
  });
  const cached = config.formatCache.get(key);
  if (cached) return { spec: spec(cached), binary: false };
  const sample = await sampleHead(log);
  if (isBinary(sample)) return { spec: spec('plain'), binary: true };
  const text = sample.toString('utf8');
  // The sample may end inside a line: leave that line out.
  const lines = splitLines(sample.length >= SAMPLE_BYTES ? text.slice(0, Math.max(0, text.lastIndexOf('\n'))) : text);
  const format = detectFormat(lines, config.json, log.mtimeMs);
  if (lines.length >= MIN_CACHED_LINES) {
    if (config.formatCache.size >= CACHE_LIMIT) config.formatCache.delete(config.formatCache.keys().next().value as string);
    config.formatCache.set(key, format);
  }
  return { spec: spec(format), binary: false };
}

/** inspectLog for tools: a binary file is refused with a message saying so. */
export async function textLog(log: OpenedLog, config: LogsConfig): Promise<FormatSpec> {
  const { spec, binary } = await inspectLog(log, config);
  if (binary) throw ToolError.invalidArgument(`${log.userPath} does not look like a text log (it contains NUL bytes near its start).`);
  return spec;
}
