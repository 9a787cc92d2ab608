import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { Logger } from '../core/logging.js';
import {
  PathWatcher,
  SignaturePoller,
  TreeWatcher,
  errorCode,
  isWatchLimitError,
  listingSignature,
  pathSignature,
  watchFaultFromEnvironment,
  type Follower,
  type WatchEnvironment,
  type WatchFault,
} from './watchers.js';

export { fileSignature, type WatchFault } from './watchers.js';

/** How a session hears about changes. SuiteServer implements it with notifications. */
export interface ChangeSink {
  resourceUpdated(uri: string): void;
  listChanged(): void;
}

/** Handed to a source's setup: the source publishes through it, so no server hands the hub around. */
export interface ChangeContext {
  uri: string;
  /** Announce that the subscribed resource changed (debounced and coalesced by the hub). */
  publish(): void;
  log: Logger;
}

/** What a server attaches to a subscribed URI; every part is optional and they combine. */
export interface ChangeSource {
  /**
   * Files (or directories: their direct children) to watch. `path` stays as a one-element shorthand.
   * Give real paths: a symlink is followed as an entry of its own directory, not to its target.
   */
  path?: string;
  paths?: string[];
  /** Directories watched recursively: a change anywhere below (any depth) publishes. */
  trees?: string[];
  /**
   * For what cannot be watched (an HTTP API, a network filesystem): every intervalMs the hub calls
   * signature(); a value different from the previous one publishes. undefined = "gone".
   */
  poll?: { intervalMs: number; signature: () => Promise<string | undefined> };
  /**
   * For a source that follows on its own (a connection it opens, a LISTEN it issues) and returns
   * before that is in place: settles once a change made afterwards will be published. The hub's
   * subscribe, and so the answer to resources/subscribe or the acknowledgement of a listen stream,
   * waits for it (as it waits for paths and trees to be watched and a poll's first signature); a
   * rejection fails the subscription.
   */
  armed?: Promise<unknown>;
  dispose?: () => void | Promise<void>;
}

export type ChangeSetup = (change: ChangeContext) => Promise<ChangeSource | undefined>;

export interface ChangeHubOptions {
  /** Quiet time before a burst of changes becomes one notification. */
  debounceMs?: number;
  /** A steady stream of changes still notifies at least this often. */
  maxWaitMs?: number;
  log?: Logger;
  /** How often a path or tree that cannot be watched (watch limit reached) is polled instead. Default 1000 ms. */
  fallbackPollMs?: number;
  /**
   * Fault seam for tests: every new native watch fails with this code, as it does when the kernel's
   * inotify watches (ENOSPC) or descriptors (EMFILE) run out. Defaults to `SUITE_WATCH_FAULT`.
   */
  watchFault?: WatchFault;
  /**
   * Carries the changes handlers announce (`ctx.changes.resourceUpdated`, `resourceListChanged`) to
   * the other replicas of the server and theirs here; the process's relay (`--redis-url`) by default.
   */
  relay?: ChangeRelay;
}

/** A change announced by a handler, as it travels between replicas. */
export type RelayedChange = { kind: 'updated'; uri: string } | { kind: 'list_changed' };

/** The seam between one replica's change hub and the others' (see replicas/redis-relay.ts). */
export interface ChangeRelay {
  send(change: RelayedChange): void;
  /** Registers the receiver of the other replicas' changes; returns its removal. */
  receive(handler: (change: RelayedChange) => void): () => void;
}

let processRelay: ChangeRelay | undefined;

/** Sets the relay every ChangeHub made afterwards uses by default (the CLI does, for --redis-url). */
export function setProcessChangeRelay(relay: ChangeRelay | undefined): void {
  processRelay = relay;
}

/** Poll sources may not ask for more than this (a source asking for 0 would spin). */
const MIN_POLL_INTERVAL_MS = 10;

interface Subscription {
  readonly uri: string;
  readonly sessions: Set<string>;
  /** What a server observes for itself (see `observe`): each holder's handler, called instead of notifying. */
  readonly handlers?: Map<string, () => void>;
  readonly change: ChangeContext;
  ready: Promise<void>;
  source?: ChangeSource;
  /** Keys into `followed` this subscription holds. */
  readonly follows: string[];
  poller?: SignaturePoller;
  timer?: NodeJS.Timeout;
  firstPendingAt?: number;
}

type FollowKind = 'path' | 'tree';

/** A path or tree followed for one or more URIs: by a native watcher, or by polling when that failed. */
/** Which entries a listing watch leaves out; `stats` is there when the caller knows the entry's type. */
export type ListingFilter = (p: string, stats?: { isFile(): boolean }) => boolean;

/**
 * A watch for files appearing and disappearing under some directories (list_changed), held by
 * sessions. chokidar does the watching (depth and filter included); a PathWatcher on each directory
 * sees it removed and created again, which chokidar does not follow; a poller of the names replaces
 * both once the kernel refuses watches.
 */
interface Listing {
  holders: Set<string>;
  dirs: string[];
  depth: number;
  ignored: ListingFilter | undefined;
  watcher: FSWatcher | undefined;
  roots: PathWatcher[];
  poller: SignaturePoller | undefined;
  closed: boolean;
  /** Ends the wait for chokidar's 'ready' when the listing is polled or stopped instead. */
  settle?: () => void;
  /** Settles once the listing is followed (watched, or its first poll taken): later holders wait for it too. */
  ready: Promise<void>;
}

interface Followed {
  readonly kind: FollowKind;
  readonly target: string;
  readonly uris: Set<string>;
  ready: Promise<void>;
  watcher?: Follower;
  poller?: SignaturePoller;
  starting: boolean;
  /** A failure the watcher reported while it was still starting. */
  failure?: unknown;
  closed: boolean;
}

let chokidar: Promise<typeof import('chokidar')> | undefined;
/** chokidar is loaded on the first listing watch: most sessions never list or subscribe. */
function loadChokidar(): Promise<typeof import('chokidar')> {
  chokidar ??= import('chokidar');
  return chokidar;
}

/** What a server observes for itself lives beside the subscriptions, under keys no client URI can take. */
function observeKey(key: string): string {
  return `\u0000observe:${key}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * One per process. Counts subscriptions per URI across sessions, follows the paths, trees and poll
 * sources the subscribed resources name (each path or tree once, however many URIs hold it), and
 * turns bursts of changes into one `notifications/resources/updated` per URI per subscribed session.
 */
export class ChangeHub {
  private readonly sinks = new Map<string, ChangeSink>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly followed = new Map<string, Followed>();
  private readonly listings = new Map<string, Listing>();
  private listTimer: NodeJS.Timeout | undefined;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly fallbackPollMs: number;
  private readonly log: Logger;
  private readonly env: WatchEnvironment;
  private warnedFallback = false;
  private closed = false;

  constructor(options: ChangeHubOptions = {}) {
    this.debounceMs = options.debounceMs ?? 150;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.fallbackPollMs = options.fallbackPollMs ?? 1000;
    this.log = options.log ?? new Logger('changes');
    this.env = { fault: options.watchFault ?? watchFaultFromEnvironment(), log: this.log };
    this.relay = options.relay ?? processRelay;
    // Another replica's announcement reaches this replica's followers as a local one would (the
    // debounce merges it with what this replica's own watchers saw of the same change).
    this.stopRelay = this.relay?.receive((change) => (change.kind === 'updated' ? this.publish(change.uri) : this.publishListChanged()));
  }

  private readonly relay: ChangeRelay | undefined;
  private readonly stopRelay: (() => void) | undefined;

  /** A handler's announcement that `uri` changed: for this replica's followers and, through the relay, the others'. */
  announce(uri: string): void {
    this.publish(uri);
    this.relay?.send({ kind: 'updated', uri });
  }

  /** A handler's announcement that the resource list changed, here and on the other replicas. */
  announceListChanged(): void {
    this.publishListChanged();
    this.relay?.send({ kind: 'list_changed' });
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
    let count = 0;
    for (const sub of this.subscriptions.values()) if (!sub.handlers) count++;
    return count;
  }

  /** Number of keys servers observe for themselves (see `observe`). */
  get activeObservers(): number {
    return this.subscriptions.size - this.activeSubscriptions;
  }

  /** Paths (not trees) held right now, watched or polled. */
  get watchedPaths(): string[] {
    return this.targets('path');
  }

  /** Trees held right now, watched or polled. */
  get watchedTrees(): string[] {
    return this.targets('tree');
  }

  /** Pollers running now: poll sources, and paths, trees and listings polled because they could not be watched. */
  get activePollers(): number {
    let count = 0;
    for (const sub of this.subscriptions.values()) if (sub.poller?.running) count++;
    for (const f of this.followed.values()) if (f.poller?.running) count++;
    for (const l of this.listings.values()) if (l.poller?.running) count++;
    return count;
  }

  /** True when a native watcher itself (not just the bookkeeping) follows this path or tree. */
  isWatching(p: string): boolean {
    const f = this.followedAt(p);
    return f !== undefined && !f.poller && f.watcher?.following === true;
  }

  /** True when this path or tree is followed by polling because it could not be watched. */
  isPolling(p: string): boolean {
    return this.followedAt(p)?.poller?.running === true;
  }

  isSubscribed(sessionId: string, uri: string): boolean {
    return this.subscriptions.get(uri)?.sessions.has(sessionId) ?? false;
  }

  /**
   * Subscribes a session to a URI. The first subscriber runs `setup` (start watching a path,
   * LISTEN on a channel) with a ChangeContext to publish through; later ones share it. Resolves once
   * every path and tree is really followed and a poll source has its first signature, so a change
   * made right after this returns is not missed. Subscribing twice is harmless.
   */
  async subscribe(sessionId: string, uri: string, setup: ChangeSetup): Promise<void> {
    return this.hold(sessionId, uri, setup);
  }

  /**
   * Follows what `setup` names for the server's own sake rather than for a client's subscription
   * (a listing that depends on what is on disk): `onChange` runs after each burst of changes,
   * debounced like updates. Sessions following the same `key` share one source, each with its own
   * handler; the last to `unobserve`, or to close its session, releases it. Resolves once followed.
   */
  async observe(sessionId: string, key: string, setup: ChangeSetup, onChange: () => void): Promise<void> {
    return this.hold(sessionId, observeKey(key), setup, onChange);
  }

  async unobserve(sessionId: string, key: string): Promise<void> {
    this.subscriptions.get(observeKey(key))?.handlers?.delete(sessionId);
    return this.unsubscribe(sessionId, observeKey(key));
  }

  private async hold(sessionId: string, uri: string, setup: ChangeSetup, handler?: () => void): Promise<void> {
    if (this.closed) return;
    const existing = this.subscriptions.get(uri);
    if (existing) {
      existing.sessions.add(sessionId);
      if (handler) existing.handlers?.set(sessionId, handler);
      await existing.ready;
      return;
    }
    const change: ChangeContext = {
      uri,
      // A source that outlives its subscription (a late callback) must not reach a newer one.
      publish: () => {
        if (this.subscriptions.get(uri) === sub) this.publish(uri);
      },
      log: this.log,
    };
    const sub: Subscription = {
      uri,
      sessions: new Set([sessionId]),
      ...(handler ? { handlers: new Map([[sessionId, handler]]) } : {}),
      change,
      ready: Promise.resolve(),
      follows: [],
    };
    this.subscriptions.set(uri, sub);
    sub.ready = (async () => {
      const source = await setup(change);
      sub.source = source;
      await this.attach(sub, source);
    })();
    try {
      await sub.ready;
    } catch (error) {
      // An unsubscribe that came meanwhile has released it already.
      if (this.subscriptions.get(uri) === sub) {
        this.subscriptions.delete(uri);
        await this.detach(sub);
      }
      throw error;
    }
  }

  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    const sub = this.subscriptions.get(uri);
    if (!sub || !sub.sessions.delete(sessionId) || sub.sessions.size > 0) return;
    this.subscriptions.delete(uri);
    await sub.ready.catch(() => undefined);
    await this.detach(sub);
  }

  /**
   * Announces a change of `uri` to its subscribers. Server code reaches this through
   * `ctx.changes.resourceUpdated(uri)` or its source's `ChangeContext.publish()`.
   */
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
      if (sub.handlers) {
        for (const handler of sub.handlers.values()) {
          try {
            handler();
          } catch (error) {
            this.log.warning('a change handler failed', { error: String(error) });
          }
        }
      } else for (const sessionId of sub.sessions) this.sinks.get(sessionId)?.resourceUpdated(uri);
    }, wait);
  }

  /**
   * Tells every session that the server's resource list changed (debounced), through each
   * session's `server.listChanged('resources')`. Server code reaches this through
   * `ctx.changes.resourceListChanged()`.
   */
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
   * A directory removed and created again is watched again; when the kernel refuses watches (or
   * the fault seam says it would), the names under the directories are polled instead.
   */
  async watchListing(sessionId: string, key: string, dirs: readonly string[], options: { depth?: number; ignored?: ListingFilter } = {}): Promise<void> {
    const existing = this.listings.get(key);
    if (existing) {
      existing.holders.add(sessionId);
      await existing.ready;
      return;
    }
    const { watch } = await loadChokidar();
    if (this.closed || this.listings.has(key)) return this.watchListing(sessionId, key, dirs, options);
    const listing: Listing = {
      holders: new Set([sessionId]),
      dirs: [...dirs],
      depth: options.depth ?? 3,
      ignored: options.ignored,
      watcher: undefined,
      roots: [],
      poller: undefined,
      closed: false,
      ready: Promise.resolve(),
    };
    this.listings.set(key, listing);
    listing.ready = this.armListing(listing, watch);
    await listing.ready;
  }

  /** Starts following a new listing; settles once a change made afterwards is seen. */
  private async armListing(listing: Listing, watch: typeof import('chokidar').watch): Promise<void> {
    // chokidar cannot be told to fail like the kernel would: under the fault seam, poll from the start.
    if (this.env.fault) {
      await this.pollListing(listing, Object.assign(new Error(`${this.env.fault} (simulated by SUITE_WATCH_FAULT)`), { code: this.env.fault }));
      return;
    }
    const watcher = watch(listing.dirs, { ignoreInitial: true, depth: listing.depth, ignored: listing.ignored, persistent: false });
    listing.watcher = watcher;
    // chokidar reads the trees before it watches them: a file created before 'ready' may never be reported.
    const ready = new Promise<void>((resolve) => {
      watcher.once('ready', resolve);
      listing.settle = resolve;
    });
    const onChange = (): void => this.publishListChanged();
    watcher.on('add', onChange).on('unlink', onChange).on('addDir', onChange).on('unlinkDir', onChange);
    watcher.on('error', (error) => {
      if (isWatchLimitError(error)) void this.pollListing(listing, error);
      else this.log.warning('listing watcher error', { error: String(error) });
    });
    for (const dir of listing.dirs) {
      const root = new PathWatcher(dir, { children: false }, { changed: () => void this.listingRootChanged(listing, dir), failed: (error) => void this.pollListing(listing, error) }, this.env);
      listing.roots.push(root);
      try {
        await root.start();
      } catch (error) {
        await this.pollListing(listing, error);
        return;
      }
    }
    await ready;
  }

  async unwatchListing(sessionId: string, key: string): Promise<void> {
    const listing = this.listings.get(key);
    if (!listing || !listing.holders.delete(sessionId) || listing.holders.size > 0) return;
    this.listings.delete(key);
    await this.stopListing(listing);
  }

  /** A listing directory was removed, or created again: chokidar stopped at the removal, so it is told to look again. */
  private async listingRootChanged(listing: Listing, dir: string): Promise<void> {
    if (listing.closed || !listing.watcher) return;
    const now = await pathSignature(dir, false).catch(() => undefined);
    if (listing.closed || !listing.watcher) return;
    if (now !== undefined) {
      listing.watcher.unwatch(dir);
      listing.watcher.add(dir);
    }
    // What the new directory already holds was never announced.
    this.publishListChanged();
  }

  /** Follows a listing by polling the names under its directories once watches were refused. */
  private async pollListing(listing: Listing, error: unknown): Promise<void> {
    if (listing.closed || listing.poller) return;
    const watcher = listing.watcher;
    const roots = listing.roots.splice(0);
    listing.watcher = undefined;
    listing.poller = new SignaturePoller(this.fallbackPollMs, () => listingSignature(listing.dirs, listing.depth, listing.ignored), () => this.publishListChanged(), this.log);
    await Promise.all([watcher?.close(), ...roots.map((r) => r.close())]);
    this.warnFallback(error);
    this.log.private('debug', `polling the listing of ${listing.dirs.join(', ')} (${errorCode(error) ?? 'error'})`);
    await listing.poller.start();
    listing.settle?.();
  }

  private async stopListing(listing: Listing): Promise<void> {
    listing.closed = true;
    listing.settle?.();
    listing.poller?.stop();
    await Promise.all([listing.watcher?.close(), ...listing.roots.map((r) => r.close())]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopRelay?.();
    if (this.listTimer) clearTimeout(this.listTimer);
    const subs = [...this.subscriptions.values()];
    this.subscriptions.clear();
    await Promise.all(
      subs.map(async (sub) => {
        await sub.ready.catch(() => undefined);
        await this.detach(sub);
      }),
    );
    await Promise.all([...this.followed.values()].map((f) => this.stopFollowing(f)));
    this.followed.clear();
    await Promise.all([...this.listings.values()].map((l) => this.stopListing(l)));
    this.listings.clear();
  }

  private targets(kind: FollowKind): string[] {
    return [...this.followed.values()].filter((f) => f.kind === kind).map((f) => f.target);
  }

  private followedAt(p: string): Followed | undefined {
    const target = path.resolve(p);
    return this.followed.get(`path:${target}`) ?? this.followed.get(`tree:${target}`);
  }

  /** Follows what the source names. Every hold is recorded before it is awaited, so detach releases it all. */
  private async attach(sub: Subscription, source: ChangeSource | undefined): Promise<void> {
    if (!source) return;
    const paths = unique([...(source.path !== undefined ? [source.path] : []), ...(source.paths ?? [])].map((p) => path.resolve(p)));
    const trees = unique((source.trees ?? []).map((p) => path.resolve(p)));
    const waits = [...paths.map((p) => this.follow(sub, 'path', p)), ...trees.map((p) => this.follow(sub, 'tree', p))];
    if (source.poll) {
      const { intervalMs, signature } = source.poll;
      if (!Number.isFinite(intervalMs) || intervalMs < MIN_POLL_INTERVAL_MS) {
        throw new RangeError(`poll.intervalMs must be at least ${MIN_POLL_INTERVAL_MS} (got ${intervalMs}).`);
      }
      sub.poller = new SignaturePoller(intervalMs, signature, () => sub.change.publish(), this.log);
      waits.push(sub.poller.start());
    }
    if (source.armed) waits.push(source.armed.then(() => undefined));
    await Promise.all(waits);
  }

  private async detach(sub: Subscription): Promise<void> {
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = undefined;
    sub.poller?.stop();
    const releases = sub.follows.splice(0).map((key) => this.unfollow(key, sub.uri));
    await Promise.all(releases);
    try {
      await sub.source?.dispose?.();
    } catch (error) {
      this.log.warning('releasing a subscription failed', { uri: sub.uri, error: String(error) });
    }
  }

  private follow(sub: Subscription, kind: FollowKind, target: string): Promise<void> {
    const key = `${kind}:${target}`;
    sub.follows.push(key);
    const existing = this.followed.get(key);
    if (existing) {
      existing.uris.add(sub.uri);
      return existing.ready;
    }
    const f: Followed = { kind, target, uris: new Set([sub.uri]), ready: Promise.resolve(), starting: true, closed: false };
    this.followed.set(key, f);
    f.ready = this.startFollowing(f);
    return f.ready;
  }

  private async unfollow(key: string, uri: string): Promise<void> {
    const f = this.followed.get(key);
    if (!f || !f.uris.delete(uri) || f.uris.size > 0) return;
    this.followed.delete(key);
    await this.stopFollowing(f);
  }

  private async startFollowing(f: Followed): Promise<void> {
    const events = {
      changed: () => this.publishFollowed(f),
      failed: (error: unknown) => void this.fallBack(f, error),
    };
    const watcher = f.kind === 'path' ? new PathWatcher(f.target, { children: true }, events, this.env) : new TreeWatcher(f.target, events, this.env);
    f.watcher = watcher;
    try {
      await watcher.start();
    } catch (error) {
      f.failure ??= error;
    }
    f.starting = false;
    if (f.closed) await watcher.close();
    else if (f.failure !== undefined) await this.fallBack(f, f.failure);
  }

  /**
   * Follows a path or tree by polling once its watcher failed: the kernel's watch limit was reached
   * (or a watch was refused). Said once per hub as a warning; the paths go to the private log only.
   */
  private async fallBack(f: Followed, error: unknown): Promise<void> {
    if (f.closed || f.poller) return;
    if (f.starting) {
      f.failure ??= error;
      return;
    }
    const wasFollowing = f.watcher?.following === true;
    const watcher = f.watcher;
    f.watcher = undefined;
    const recursive = f.kind === 'tree';
    f.poller = new SignaturePoller(this.fallbackPollMs, () => pathSignature(f.target, recursive), () => this.publishFollowed(f), this.log);
    await watcher?.close();
    this.warnFallback(error);
    this.log.private('debug', `polling ${f.kind} ${f.target} (${errorCode(error) ?? 'error'})`);
    await f.poller.start();
    // A watcher that failed while following may have missed a change on the way to the poller.
    if (wasFollowing) this.publishFollowed(f);
  }

  /** Said once per hub, subscriptions and listings alike; the paths go to the private log only. */
  private warnFallback(error: unknown): void {
    if (this.warnedFallback) return;
    this.warnedFallback = true;
    const code = errorCode(error) ?? 'error';
    const cause = isWatchLimitError(error)
      ? `the system limit for file watches was reached (${code}); raise fs.inotify.max_user_watches (or the open file limit) to get instant updates back`
      : `a file watch was refused (${code})`;
    this.log.warning(`Polling subscribed files every ${this.fallbackPollMs} ms instead of watching them: ${cause}.`);
  }

  private async stopFollowing(f: Followed): Promise<void> {
    f.closed = true;
    f.poller?.stop();
    if (!f.starting) await f.watcher?.close();
  }

  private publishFollowed(f: Followed): void {
    if (f.closed) return;
    for (const uri of f.uris) this.publish(uri);
  }
}
