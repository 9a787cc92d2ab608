import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets a server keeps for its users (an upstream's OAuth tokens), encrypted at rest with
 * AES-256-GCM: in this process, or in Redis (--redis-url) so that every replica has them. The
 * record's key is bound into the authentication tag, so a ciphertext copied under another user's
 * key does not open. Keys should be digests (a principal's key), never anything secret.
 */
export interface SecretStore {
  get(key: string): Promise<string | undefined>;
  /** Keeps `value` under `key` for `ttlSeconds`. */
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The store's failure (Redis unreachable): what a handler reports; it holds no secret. */
export class SecretStoreUnavailable extends Error {
  constructor() {
    super('The shared store of user authorizations (Redis) is unreachable; try again shortly.');
    this.name = 'SecretStoreUnavailable';
  }
}

const VERSION = 'v1';

/** AES-256-GCM under a 32-byte key, the record key as additional data: `v1.iv.tag.ciphertext` in base64url. */
export class SecretSealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new RangeError('The encryption key must be 32 bytes.');
  }

  seal(recordKey: string, value: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(recordKey, 'utf8'));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The value, or undefined for a record that is not ours (another key, tampered, another format). */
  open(recordKey: string, sealed: string): string | undefined {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(recordKey, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** In this process only: what a single HTTP process (no --redis-url) uses. Still sealed, so a heap dump shows no token in the clear. */
export class MemorySecretStore implements SecretStore {
  private readonly records = new Map<string, { sealed: string; expires: number }>();
  private writes = 0;

  constructor(private readonly sealer: SecretSealer) {}

  async get(key: string): Promise<string | undefined> {
    const record = this.records.get(key);
    if (!record) return undefined;
    if (record.expires <= Date.now()) {
      this.records.delete(key);
      return undefined;
    }
    return this.sealer.open(key, record.sealed);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    // Records nobody reads again (an abandoned sign-in) must not pile up: expired ones go every so often.
    if (++this.writes % 256 === 0) {
      const now = Date.now();
      for (const [name, record] of this.records) if (record.expires <= now) this.records.delete(name);
    }
    this.records.set(key, { sealed: this.sealer.seal(key, value), expires: Date.now() + ttlSeconds * 1000 });
  }

  async delete(key: string): Promise<void> {
    this.records.delete(key);
  }
}
