import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ByteFinder, WorkerPool, countNewlines, lineFinder, lineText, nextLineWith, requiredLiteral, scanBuffer, simdNewlineCount } from '../src/index.js';

/** A deterministic pseudo-random sequence (tests must repeat exactly). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function naiveCount(buf: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (buf[i] === 0x0a) n++;
  return n;
}

describe('countNewlines', () => {
  it('counts with WebAssembly SIMD on this Node', () => {
    expect(simdNewlineCount()).toBe(true);
  });

  it('agrees with a byte-by-byte count at every length and alignment, in its own memory and in any buffer', () => {
    const next = random(7);
    const own = scanBuffer(300_000);
    for (let t = 0; t < 300; t++) {
      const length = t < 150 ? t * 7 : Math.floor(next() * 290_000);
      const start = Math.floor(next() * 64);
      const density = next();
      const heap = Buffer.allocUnsafe(start + length);
      for (let i = 0; i < start + length; i++) heap[i] = next() < density ? 0x0a : 0x61;
      own.set(heap, 0);
      const want = naiveCount(heap, start, start + length);
      expect(countNewlines(heap, start, start + length)).toBe(want);
      expect(countNewlines(own, start, start + length)).toBe(want);
    }
  });

  it('counts past the 255 a SIMD lane can hold, and over more than the copy scratch', () => {
    const all = Buffer.alloc(1_000_003, 0x0a);
    expect(countNewlines(all)).toBe(1_000_003);
    const own = scanBuffer(all.length);
    own.fill(0x0a, 0, all.length);
    expect(countNewlines(own, 1, all.length)).toBe(1_000_002);
  });
});

describe('ByteFinder', () => {
  it('finds the first occurrence at or after a position, as indexOf does', () => {
    const next = random(11);
    const alphabet = 'abcXYZ \n';
    for (let t = 0; t < 200; t++) {
      const text = Array.from({ length: 2000 }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      const needle = text.slice(Math.floor(next() * 1990), Math.floor(next() * 1990) + 1 + Math.floor(next() * 4)) || 'Z';
      const finder = ByteFinder.for(needle, false) as ByteFinder;
      const bytes = Buffer.from(text);
      for (const from of [0, 100, 1500]) expect(finder.find(bytes, from), needle).toBe(bytes.indexOf(needle, from));
    }
  });

  it('finds the same whichever byte of the needle it anchors on: repeated bytes, common ones, the last one', () => {
    const next = random(23);
    for (const needle of ['aab', 'abab', 'aaaa', 'ZX81-RARE-TOKEN', 'pthread_spin_trylock', 'x\n', 'ab', 'q']) {
      const bytes = Buffer.from(needle);
      for (let k = 0; k < bytes.length; k++) {
        // The first buffer a finder sees decides its anchor: here every byte of the needle is common but the k-th.
        const others = [...bytes.filter((b) => b !== bytes[k]), 0x20];
        const sample = Buffer.from(Array.from({ length: 256 * 1024 }, (_, i) => others[i % others.length] as number));
        const finder = ByteFinder.for(needle, false) as ByteFinder;
        finder.find(sample, 0);
        // Text made of the needle's own bytes and its pieces, so that partial matches abound.
        const pieces = [needle, needle.slice(1), needle.slice(0, -1), needle.slice(k), needle.slice(0, k), ' ', 'a'];
        for (let t = 0; t < 20; t++) {
          const text = Buffer.from(Array.from({ length: 200 }, () => pieces[Math.floor(next() * pieces.length)]).join(''));
          for (const from of [0, 1, 37, text.length - needle.length, text.length]) {
            let expected = text.indexOf(bytes, from);
            let at = finder.find(text, from);
            expect(at, `${needle} anchored at ${k}, from ${from}`).toBe(expected);
            // Every occurrence, one after another.
            while (expected !== -1) {
              expected = text.indexOf(bytes, expected + 1);
              at = finder.find(text, at + 1);
              expect(at).toBe(expected);
            }
          }
        }
      }
    }
  });

  it('finds ASCII text in any case when asked, and refuses what bytes cannot decide', () => {
    const finder = ByteFinder.for('NeedLe', true) as ByteFinder;
    expect(finder.find(Buffer.from('a needle, a NEEDLE'), 0)).toBe(2);
    expect(finder.find(Buffer.from('a needle, a NEEDLE'), 3)).toBe(12);
    expect(ByteFinder.for('straße', true)).toBeUndefined();
    expect(ByteFinder.for('a\ufffdb', false)).toBeUndefined();
    expect(ByteFinder.for('', false)).toBeUndefined();
  });
});

describe('lines from byte hits', () => {
  it('takes a literal as it is, and from a regular expression the text every match holds', () => {
    expect(requiredLiteral('ZQX-RARE-\\d+')).toBe('ZQX-RARE-');
    expect(requiredLiteral('(a|b)c+')).toBe('c');
    expect(requiredLiteral('a|b')).toBeUndefined();
    expect(requiredLiteral('\\w+\\s\\d')).toBeUndefined();
    expect(lineFinder('a.b', true, true)).toBeInstanceOf(ByteFinder);
    expect(lineFinder('\\d+', false, true)).toBeUndefined();
  });

  it('names the line that holds a hit, without its CR', () => {
    const bytes = Buffer.from('first\r\nsecond has it\r\nthird\nit again');
    const finder = ByteFinder.for('it', false) as ByteFinder;
    const one = nextLineWith(finder, bytes, 0);
    expect(one && lineText(bytes, one)).toBe('second has it');
    const two = nextLineWith(finder, bytes, (one?.end ?? 0) + 1);
    expect(two && lineText(bytes, two)).toBe('it again');
    expect(nextLineWith(finder, bytes, (two?.end ?? 0) + 1)).toBeUndefined();
  });
});

describe('WorkerPool', () => {
  const url = new URL('./fixtures/echo-worker.mjs', import.meta.url);
  const ask = async (worker: Worker, m: unknown): Promise<number> => {
    worker.postMessage(m);
    const [answer] = (await once(worker, 'message')) as [{ threadId: number }];
    return answer.threadId;
  };

  it('shares at most `max` workers between leases, and keeps them warm for the next', async () => {
    const pool = new WorkerPool({ url, shared: true, max: 2, idleMs: 60_000 });
    const leases = [pool.lease(), pool.lease(), pool.lease(), pool.lease()];
    expect(pool.size).toBe(2);
    expect(new Set(leases).size).toBe(2);
    const first = await ask(leases[0] as Worker, 1);
    for (const w of leases) pool.release(w);
    const again = pool.lease();
    expect(await ask(again, 2)).toBe(first);
    expect(pool.startedCount).toBe(2);
    pool.release(again);
    await pool.drain();
    expect(pool.size).toBe(0);
  });

  it('gives each lease a worker of its own when not shared, ends a worker given back as not reusable, and lets idle ones go', async () => {
    const pool = new WorkerPool({ url, max: 1, idleMs: 100 });
    const [a, b] = [pool.lease(), pool.lease()];
    expect(a).not.toBe(b);
    const exited = once(b, 'exit');
    pool.release(b, false);
    await exited;
    pool.release(a);
    expect(pool.size).toBe(1);
    await once(a, 'exit');
    expect(pool.size).toBe(0);
  });
});
