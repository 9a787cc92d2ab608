import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConformanceTarget } from '@suite/test-kit/abuse';

/**
 * What the abuse kit (abuse.test.ts) and the fuzzer (fuzz.test.ts) need to run this server's built
 * bin: its arguments, a cheap call, and what it may name in answers. A server with files, a
 * database or an upstream API prepares them here and releases them in cleanup (see the other
 * servers' conformance-target.ts and test-kit/README.md).
 */
export const target: ConformanceTarget = {
  name: 'template-check',
  bin: path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js'),
  async prepare() {
    return {
      args: [],
      cheapCall: { name: 'count_words', arguments: { text: 'one two\nthree' } },
      allowedPaths: [],
      samples: ['one two three', 'buy milk'],
      namedSamples: { style: ['bullets', 'prose'] },
      fuzz: { numRuns: 200 },
      async cleanup() {},
    };
  },
};
