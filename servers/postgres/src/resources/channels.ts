import { ToolError, type SuiteServer } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { baseUri } from './uris.js';

/** PostgreSQL cuts identifiers at NAMEDATALEN - 1 bytes; a longer name would LISTEN on another channel. */
const MAX_CHANNEL_BYTES = 63;

/**
 * LISTEN/NOTIFY channels as resources: subscribing LISTENs on the shared listener connection,
 * and every NOTIFY on the channel becomes notifications/resources/updated. Reading shows the
 * recent payloads received while subscribed.
 */
export function registerChannelResources(server: SuiteServer, config: PostgresConfig): void {
  const { database, listener } = config;
  const parse = (uri: string, raw: string | undefined): string => {
    const channel = raw ?? '';
    if (!channel || channel.includes('\0') || Buffer.byteLength(channel) > MAX_CHANNEL_BYTES) {
      throw ToolError.invalidArgument(`Invalid channel in ${uri}: a channel name is 1 to ${MAX_CHANNEL_BYTES} bytes, percent-encoded in the URI.`);
    }
    return channel;
  };
  server.resourceTemplate({
    uriTemplate: `${baseUri(database.target)}/channel/{name}`,
    name: config.name === undefined ? 'notify-channel' : `notify-channel (${config.name})`,
    title: 'LISTEN/NOTIFY channel',
    description:
      'A PostgreSQL notification channel. Subscribe to get notifications/resources/updated on every NOTIFY; read to see the payloads received since subscribing (latest 50) and the times the server was not listening (a lost connection: NOTIFYs sent then were missed).',
    mimeType: 'application/json',
    async read(uri, variables) {
      const channel = parse(uri, variables.name);
      const body = {
        channel,
        listening: listener.isListening(channel),
        notifications: listener.recentNotifications(channel),
        interruptions: listener.recentInterruptions(channel),
      };
      return { uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) };
    },
    async subscribe(uri, variables, _ctx, change) {
      const channel = parse(uri, variables.name);
      // A notification, and also the end of an interruption: what was sent meanwhile is lost, so the subscriber should look again.
      const stop = await listener.listen(channel, () => change.publish());
      return { dispose: stop };
    },
  });
}
