import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { replicaSuite } from '@suite/test-kit/replicas';
import { target } from './conformance-target.js';

/** A file of the first root (the conformance target's `work`), by its real path. */
const watched = async (args: string[]): Promise<string> => path.join(await realpath(args[0]!), 'a.txt');

// The replicas share a directory on one host: each one's own watch sees a file written through the
// other, Redis or not. (Across hosts on a network volume, where a watch does not see another host's
// writes, that is not shared yet: the write tools announce nothing through the change relay.)
replicaSuite(target, {
  listen: {
    what: 'a file written through replica B',
    follow: async (_client, prepared) => ({ uri: pathToFileURL(await watched(prepared.args)).href }),
    change: async (writer, attempt, prepared) => {
      const written = await writer.callTool({ name: 'write_file', arguments: { path: await watched(prepared.args), content: `written through B, ${attempt}\n` } });
      expect(written.isError, JSON.stringify(written.content)).toBeFalsy();
    },
    carriedBy: 'world',
  },
});
