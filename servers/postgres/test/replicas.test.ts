import { expect } from 'vitest';
import { replicaSuite } from '@suite/test-kit/replicas';
import { target } from './conformance-target.js';

const CHANNEL = `replicas_${process.pid}`;

// A NOTIFY sent through replica B reaches replica A's listen stream through the database itself:
// each replica LISTENs on its own connection, so PostgreSQL is the shared bus, Redis or not.
replicaSuite(target, {
  listen: {
    what: 'a NOTIFY sent through replica B',
    follow: async (client) => {
      const { resources } = await client.listResources();
      const base = /^(postgres:\/\/[^/]+\/[^/]+)\//.exec(resources[0]!.uri)![1];
      return { uri: `${base}/channel/${CHANNEL}` };
    },
    change: async (writer, attempt) => {
      const sent = await writer.callTool({ name: 'execute', arguments: { sql: `SELECT pg_notify('${CHANNEL}', 'through B ${attempt}')` } });
      expect(sent.isError, JSON.stringify(sent.content)).toBeFalsy();
    },
    carriedBy: 'world',
  },
});
