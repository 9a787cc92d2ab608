import { expect } from 'vitest';
import { replicaSuite } from '@suite/test-kit/replicas';
import { target } from './conformance-target.js';

// A table created through replica B changes the list of resources; nothing on replica A follows
// the database file, so only the change relay (Redis) tells A.
replicaSuite(target, {
  listen: {
    what: 'a table created through replica B',
    follow: async () => 'list',
    change: async (writer, attempt) => {
      const made = await writer.callTool({ name: 'create_table', arguments: { query: `CREATE TABLE across_${Date.now()}_${attempt} (x)` } });
      expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    },
    carriedBy: 'redis',
  },
});
