import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '@suite/test-kit/abuse';
import { connectModernHttp, erasSuite, untilListenUpdate } from '@suite/test-kit/eras';
import Database from '../src/sqlite-addon.js';
import { target } from './conformance-target.js';
import { BIN, makeDatabaseFile } from './helpers.js';

erasSuite(target, { follows: true });

describe('sqlite in the 2026-07-28 era (the built bin over HTTP)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('a listen stream hears another process change a table, and the schema; a stream that closes lets go', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    closers.push(cleanup);
    const http = await startHttpServer(BIN, ['--allow-write', file]);
    closers.push(async () => void (await http.server.stop()));
    const client = await connectModernHttp(http.url);
    closers.push(() => client.close());
    const table = 'sqlite://sample/tables/people';
    const schema = 'sqlite://sample/schema';
    const subscription = await client.listen({ resourceSubscriptions: [table, schema], resourcesListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ resourceSubscriptions: [table, schema] });
    await untilListenUpdate(client, table, (attempt) => {
      const other = new Database(file);
      other.prepare('INSERT INTO people (name) VALUES (?)').run(`listener ${attempt}`);
      other.close();
    });
    // A write through the server itself (another request, another instance) reaches the stream too.
    await untilListenUpdate(client, schema, (attempt) => client.callTool({ name: 'create_table', arguments: { query: `CREATE TABLE made_${attempt} (x)` } }).then(() => undefined));
    await subscription.close();
    expect(await subscription.closed).toBe('local');
  });
});
