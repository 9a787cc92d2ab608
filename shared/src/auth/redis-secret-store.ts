import { UNAVAILABLE, type RedisLink } from '../replicas/redis-link.js';
import { SecretStoreUnavailable, type SecretSealer, type SecretStore } from './secret-store.js';

/** In Redis under the deployment's prefix and `namespace`: every replica sharing the key reads what one stored. */
export class RedisSecretStore implements SecretStore {
  constructor(
    private readonly link: RedisLink,
    private readonly namespace: string,
    private readonly sealer: SecretSealer,
  ) {}

  private name(key: string): string {
    return `${this.link.prefix}secrets:${this.namespace}:${key}`;
  }

  async get(key: string): Promise<string | undefined> {
    const sealed = await this.link.run((redis) => redis.get(this.name(key)));
    if (sealed === UNAVAILABLE) throw new SecretStoreUnavailable();
    return sealed === null ? undefined : this.sealer.open(`${this.namespace}:${key}`, sealed);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    const done = await this.link.run((redis) => redis.set(this.name(key), this.sealer.seal(`${this.namespace}:${key}`, value), 'EX', Math.max(1, Math.ceil(ttlSeconds))));
    if (done === UNAVAILABLE) throw new SecretStoreUnavailable();
  }

  async delete(key: string): Promise<void> {
    const done = await this.link.run((redis) => redis.del(this.name(key)));
    if (done === UNAVAILABLE) throw new SecretStoreUnavailable();
  }
}
