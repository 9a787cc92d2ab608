import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { makeTempDir, snapshotTree } from '@suite/test-kit';
import { BIN } from './helpers.js';

const LEVELS = ['DEBUG', 'INFO', 'INFO', 'WARN', 'ERROR'];

/** Plain lines with times and levels; no absolute paths or stack frames, which the kits would take for leaks. */
function plainLog(lines: number, startMinute = 0): string {
  let text = '';
  for (let i = 0; i < lines; i++) {
    const t = new Date(Date.UTC(2024, 0, 15, 10, startMinute, 0) + i * 1000).toISOString();
    text += `${t} ${LEVELS[i % LEVELS.length]} [worker-${i % 4}] request ${i} took ${(i * 7) % 1000} ms user=u${i % 50}\n`;
  }
  return text;
}

/** The logs server on a directory of plain, JSON and rotated logs (it never writes: the directory must not change). */
export const target: ConformanceTarget = {
  name: 'logs',
  bin: BIN,
  async prepare() {
    const { dir, cleanup } = await makeTempDir('logs-conformance-');
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'app.log'), plainLog(2000, 30));
    await writeFile(path.join(dir, 'app.log.1'), plainLog(500));
    await writeFile(path.join(dir, 'app.log.2.gz'), gzipSync(plainLog(300)));
    await writeFile(path.join(dir, 'events.jsonl'), Array.from({ length: 300 }, (_, i) => JSON.stringify({ time: `2024-01-15T11:00:${String(i % 60).padStart(2, '0')}Z`, level: i % 7 === 0 ? 'error' : 'info', msg: `event ${i}`, n: i })).join('\n') + '\n');
    await writeFile(path.join(dir, 'sub', 'worker.log'), plainLog(200, 45));
    // Big enough that a search of it is still running when SIGTERM comes.
    await writeFile(path.join(dir, 'big.log'), plainLog(400_000));
    const before = await snapshotTree(dir);
    const app = path.join(dir, 'app.log');
    return {
      args: [dir],
      cheapCall: { name: 'tail_log', arguments: { path: app, lines: 5 } },
      followed: {
        uri: `logs://file${app}`,
        change: (round) => appendFile(app, `2024-01-15T12:00:00Z INFO appended in round ${round}\n`),
        refused: ['logs://file/etc/passwd', `logs://file${path.join(dir, 'missing.log')}`, 'nothing://at/all'],
      },
      allowedPaths: [dir],
      samples: [
        dir, app, path.join(dir, 'app.log.1'), path.join(dir, 'app.log.2.gz'), path.join(dir, 'events.jsonl'), path.join(dir, 'sub'), path.join(dir, 'sub', 'worker.log'),
        'app.log', 'sub/worker.log', 'ERROR', 'request 1', 'worker-[0-3]', 'took (\\d+) ms', 'u4\\b', '15m', '2h', '7d', '2024-01-15T10:00:00Z', '2024-01-15T10:30:00', 'error', 'warning',
      ],
      namedSamples: {
        path: [app, path.join(dir, 'app.log.1'), path.join(dir, 'app.log.2.gz'), path.join(dir, 'events.jsonl'), path.join(dir, 'sub', 'worker.log'), path.join(dir, 'sub'), dir],
        paths: [app, path.join(dir, 'events.jsonl'), path.join(dir, 'sub')],
        pattern: ['ERROR', 'request \\d+', 'worker-[0-3]', 'took (\\d+) ms', 'event 1'],
        grep: ['ERROR', 'user=u4'],
        since: ['15m', '2h', '30d', '2024-01-15T10:00:00Z', '2024-01-15T10:30:00'],
        until: ['1m', '2024-01-15T11:00:00Z'],
      },
      inFlight: {
        calls: Array.from({ length: 8 }, (_, i) => ({ name: 'search_logs', arguments: { pattern: `request ${i}\\d* took 9\\d\\d ms`, paths: [path.join(dir, 'big.log')] } })),
        directories: [dir],
        async check() {
          expect(await snapshotTree(dir)).toEqual(before);
        },
      },
      fuzz: { numRuns: 300 },
      cleanup,
    };
  },
};
