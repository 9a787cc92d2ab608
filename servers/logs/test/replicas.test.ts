import { appendFile } from 'node:fs/promises';
import { replicaSuite } from '@suite/test-kit/replicas';
import { target } from './conformance-target.js';

// The logs server writes nothing: a log grows because the application appends to it, and every
// replica that follows the file sees that itself. So there is no change made through replica B for
// Redis to carry; what the listen test shows is a stream on replica A hearing the log grow while
// requests alternate between the replicas, with Redis and without.
replicaSuite(target, {
  listen: {
    what: 'a line the application appends to a followed log',
    follow: async (_client, prepared) => ({ uri: `logs://file${prepared.cheapCall.arguments.path as string}` }),
    change: async (_writer, attempt, prepared) => appendFile(prepared.cheapCall.arguments.path as string, `${new Date().toISOString()} INFO appended ${attempt}\n`),
    carriedBy: 'world',
  },
});
