/**
 * A TCP proxy between the server under test and PostgreSQL, so a test can do to the network
 * what happens to real users: cut every connection at once (a restart, a failover, a NAT that
 * forgot the flow), refuse new ones for a while (the database still coming back), or stop
 * forwarding without closing anything (a cable pulled: nothing answers, nothing ends).
 */
import net from 'node:net';

export interface TcpProxy {
  /** The port on 127.0.0.1 that forwards to the target. */
  readonly port: number;
  /** Connections forwarded since the start (each client connection counts once). */
  readonly accepted: number;
  /** Connections open now. */
  readonly open: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Destroys every open connection, both sides, at once. */
  cut(): void;
  /**
   * Drops the PostgreSQL side of every open connection but leaves the client's side open and
   * silent: the client finds out only when it next sends something, which is answered with a
   * reset (a NAT or firewall that forgot the flow, a failover: an idle pooled connection that
   * looks alive and is not).
   */
  forget(): void;
  /** Stops listening: new connections get ECONNREFUSED until `accept()`. Open ones stay. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  /** Accepts new connections and closes them at once (a server refusing clients), recording when each came. */
  slam(): void;
  /** Times (Date.now()) of the connections slammed so far. */
  readonly slammed: readonly number[];
  /** Keeps connections open but forwards nothing in either direction until `resume()`. */
  blackhole(): void;
  resume(): void;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  forgotten: boolean;
}

export async function startTcpProxy(target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let accepted = 0;
  let holding = false;
  let slamming = false;
  const slammed: number[] = [];
  const held: { socket: net.Socket; chunk: Buffer }[] = [];

  const forward = (pair: Pair, from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (pair.forgotten) pair.client.resetAndDestroy();
      else if (holding) held.push({ socket: to, chunk });
      else to.write(chunk);
    });
  };

  const onConnection = (client: net.Socket): void => {
    if (slamming) {
      slammed.push(Date.now());
      client.on('error', () => undefined);
      client.destroy();
      return;
    }
    accepted++;
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, upstream, forgotten: false };
    pairs.add(pair);
    const teardown = (): void => {
      if (pair.forgotten && !client.destroyed) return;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', teardown);
      socket.on('close', teardown);
    }
    forward(pair, client, upstream);
    forward(pair, upstream, client);
  };

  let server = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  const cut = (): void => {
    held.length = 0;
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      pair.client.destroy();
      pair.upstream.destroy();
    }
  };
  const forget = (): void => {
    for (const pair of pairs) {
      pair.forgotten = true;
      pair.upstream.destroy();
    }
  };
  const refuse = async (): Promise<void> => {
    if (!server.listening) return;
    // close() stops accepting at once; its callback would wait for the open connections to end.
    server.close();
    await new Promise((resolve) => setImmediate(resolve));
  };

  return {
    port,
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut,
    forget,
    refuse,
    slam() {
      slamming = true;
    },
    slammed,
    async accept() {
      slamming = false;
      if (server.listening) return;
      server = net.createServer(onConnection);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    blackhole() {
      holding = true;
    },
    resume() {
      holding = false;
      for (const { socket, chunk } of held.splice(0)) if (!socket.destroyed) socket.write(chunk);
    },
    async close() {
      cut();
      await refuse();
    },
  };
}
