import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { Logger } from './logging.js';

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

let chokidar: Promise<typeof import('chokidar')> | undefined;
/** chokidar is loaded on the first watch: most sessions never subscribe to anything. */
function loadChokidar(): Promise<typeof import('chokidar')> {
  chokidar ??= import('chokidar');
  return chokidar;
}

/** How a session hears about changes. SuiteServer implements it with notifications. */
export interface ChangeSink {
  resourceUpdated(uri: string): void;
  listChanged(): void;
}

/**
 * What a server attaches to a subscribed URI: a file or directory to watch, and/or a disposer for
 * a non-file source (a LISTEN channel, a poller) that calls `hub.publish(uri)` itself.
 */
export interface ChangeSource {
  path?: string;
  /** Several files that together make the resource (a database and its -wal file). */
  paths?: string[];
  dispose?: () => void | Promise<void>;
}

function pathsOf(source: ChangeSource | undefined): string[] {
  if (!source) return [];
  return [...(source.path ? [source.path] : []), ...(source.paths ?? [])].map((p) => path.resolve(p));
}

interface Subscription {
  sessions: Set<string>;
  source: Promise<ChangeSource | undefined>;
  timer?: NodeJS.Timeout;
  firstPendingAt?: number;
}

export interface ChangeHubOptions {
  /** Quiet time before a burst of changes becomes one notification. */
  debounceMs?: number;
  /** A steady stream of changes still notifies at least this often. */
  maxWaitMs?: number;
  log?: Logger;
}

/**
 * One per process. Counts subscriptions per URI across sessions, keeps a single chokidar watcher
 * whose paths follow the subscriptions, and turns bursts of file events into one
 * `notifications/resources/updated` per URI per subscribed session.
 */
export class ChangeHub {
  private readonly sinks = new Map<string, ChangeSink>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly urisByPath = new Map<string, Set<string>>();
  private readonly listings = new Map<string, { watcher: FSWatcher; holders: Set<string> }>();
  private watcher: FSWatcher | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly log: Logger;
  private closed = false;

  constructor(options: ChangeHubOptions = {}) {
    this.debounceMs = options.debounceMs ?? 150;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.log = options.log ?? new Logger('changes');
  }

  addSession(sessionId: string, sink: ChangeSink): void {
    this.sinks.set(sessionId, sink);
  }

  /** Drops a session and everything it held: its subscriptions and listing watches. */
  async removeSession(sessionId: string): Promise<void> {
    this.sinks.delete(sessionId);
    const releases: Promise<void>[] = [];
    for (const [uri, sub] of this.subscriptions) {
      if (sub.sessions.has(sessionId)) releases.push(this.unsubscribe(sessionId, uri));
    }
    for (const key of this.listings.keys()) releases.push(this.unwatchListing(sessionId, key));
    await Promise.all(releases);
  }

  /** Number of URIs with at least one subscriber (for tests and diagnostics). */
  get activeSubscriptions(): number {
    return this.subscriptions.size;
  }

  /** Paths the shared watcher holds right now. */
  get watchedPaths(): string[] {
    return [...this.urisByPath.keys()];
  }

  /** True when the file watcher itself (not just the bookkeeping) follows this path. */
  isWatching(p: string): boolean {
    if (!this.watcher) return false;
    const watched = this.watcher.getWatched();
    return watched[p] !== undefined || (watched[path.dirname(p)] ?? []).includes(path.basename(p));
  }

  isSubscribed(sessionId: string, uri: string): boolean {
    return this.subscriptions.get(uri)?.sessions.has(sessionId) ?? false;
  }

  /**
   * Subscribes a session to a URI. The first subscriber runs `setup` (start watching a path,
   * LISTEN on a channel); later ones share it. Subscribing twice is harmless.
   */
  async subscribe(sessionId: string, uri: string, setup: () => Promise<ChangeSource | undefined>): Promise<void> {
    const existing = this.subscriptions.get(uri);
    if (existing) {
      existing.sessions.add(sessionId);
      await existing.source;
      return;
    }
    // Resolves once the watcher really follows every path, so a change made right after the
    // subscribe call returns is not missed.
    const source = setup().then(async (src) => {
      await Promise.all(pathsOf(src).map((p) => this.watchPath(p, uri)));
      return src;
    });
    const sub: Subscription = { sessions: new Set([sessionId]), source };
    this.subscriptions.set(uri, sub);
    try {
      await source;
    } catch (error) {
      if (this.subscriptions.get(uri) === sub) this.subscriptions.delete(uri);
      throw error;
    }
  }

  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    const sub = this.subscriptions.get(uri);
    if (!sub || !sub.sessions.delete(sessionId) || sub.sessions.size > 0) return;
    this.subscriptions.delete(uri);
    if (sub.timer) clearTimeout(sub.timer);
    const src = await sub.source.catch(() => undefined);
    for (const p of pathsOf(src)) this.unwatchPath(p, uri);
    try {
      await src?.dispose?.();
    } catch (error) {
      this.log.warning('releasing a subscription failed', { uri, error: String(error) });
    }
  }

  /** A change in a non-file source, or a change the server made itself. */
  publish(uri: string): void {
    const sub = this.subscriptions.get(uri);
    if (!sub || this.closed) return;
    const now = Date.now();
    sub.firstPendingAt ??= now;
    if (sub.timer) clearTimeout(sub.timer);
    const wait = Math.max(0, Math.min(this.debounceMs, sub.firstPendingAt + this.maxWaitMs - now));
    sub.timer = setTimeout(() => {
      sub.timer = undefined;
      sub.firstPendingAt = undefined;
      for (const sessionId of sub.sessions) this.sinks.get(sessionId)?.resourceUpdated(uri);
    }, wait);
  }

  /** Tells every session that the server's resource list changed (debounced). */
  publishListChanged(): void {
    if (this.closed || this.listTimer) return;
    this.listTimer = setTimeout(() => {
      this.listTimer = undefined;
      for (const sink of this.sinks.values()) sink.listChanged();
    }, this.debounceMs);
  }

  /**
   * Watches directory trees for files appearing and disappearing, and sends `list_changed` to
   * every session. Held per session under a key, so the watcher stops when the last holder goes.
   */
  async watchListing(sessionId: string, key: string, dirs: string[], options: { depth?: number; ignored?: (p: string) => boolean } = {}): Promise<void> {
    const existing = this.listings.get(key);
    if (existing) {
      existing.holders.add(sessionId);
      return;
    }
    const { watch } = await loadChokidar();
    if (this.closed || this.listings.has(key)) return this.watchListing(sessionId, key, dirs, options);
    const watcher = watch(dirs, {
      ignoreInitial: true,
      depth: options.depth ?? 3,
      ignored: options.ignored,
      persistent: false,
    });
    const onChange = (): void => this.publishListChanged();
    watcher.on('add', onChange).on('unlink', onChange).on('addDir', onChange).on('unlinkDir', onChange);
    watcher.on('error', (error) => this.log.warning('listing watcher error', { error: String(error) }));
    this.listings.set(key, { watcher, holders: new Set([sessionId]) });
  }

  async unwatchListing(sessionId: string, key: string): Promise<void> {
    const listing = this.listings.get(key);
    if (!listing || !listing.holders.delete(sessionId) || listing.holders.size > 0) return;
    this.listings.delete(key);
    await listing.watcher.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.listTimer) clearTimeout(this.listTimer);
    const sources = [...this.subscriptions.values()];
    this.subscriptions.clear();
    this.urisByPath.clear();
    await Promise.all(
      sources.map(async (sub) => {
        if (sub.timer) clearTimeout(sub.timer);
        const src = await sub.source.catch(() => undefined);
        await Promise.resolve(src?.dispose?.()).catch(() => undefined);
      }),
    );
    await Promise.all([...this.listings.values()].map((l) => l.watcher.close()));
    this.listings.clear();
    await this.watcher?.close();
    this.watcher = undefined;
  }

  private async watchPath(p: string, uri: string): Promise<void> {
    let uris = this.urisByPath.get(p);
    if (uris) {
      uris.add(uri);
      return;
    }
    uris = new Set([uri]);
    this.urisByPath.set(p, uris);
    const watcher = await this.ensureWatcher();
    if (this.urisByPath.get(p) !== uris) return; // unsubscribed while chokidar was loading
    watcher.add(p);
    await this.untilWatched(watcher, p);
  }

  /** chokidar adds paths asynchronously and has no per-path ready event: look until it is there. */
  private async untilWatched(watcher: FSWatcher, p: string): Promise<void> {
    // A path that does not exist (yet) is never listed; chokidar reports it when it appears.
    if (!(await exists(p))) return;
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline && this.watcher === watcher) {
      if (this.isWatching(p)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private unwatchPath(p: string, uri: string): void {
    const uris = this.urisByPath.get(p);
    if (!uris) return;
    uris.delete(uri);
    if (uris.size === 0) {
      this.urisByPath.delete(p);
      this.watcher?.unwatch(p);
    }
  }

  private async ensureWatcher(): Promise<FSWatcher> {
    const { watch } = await loadChokidar();
    if (!this.watcher) {
      // atomic: an editor's (or our own) write-to-temp-then-rename is one change, not unlink+add.
      this.watcher = watch([], { ignoreInitial: true, atomic: true, persistent: false, depth: 0 });
      this.watcher.on('all', (_event, changed) => this.onFileEvent(path.resolve(changed)));
      this.watcher.on('error', (error) => this.log.warning('file watcher error', { error: String(error) }));
    }
    return this.watcher;
  }

  private onFileEvent(changed: string): void {
    // A watched directory hears about its children; a watched file about itself.
    for (const candidate of [changed, path.dirname(changed)]) {
      const uris = this.urisByPath.get(candidate);
      if (uris) for (const uri of uris) this.publish(uri);
    }
  }
}
