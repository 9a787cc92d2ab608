import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/logging.js';
import { isInside } from './paths.js';

export interface Root {
  uri: string;
  name?: string;
}

export interface RootsSnapshot {
  /** Real paths of the directories the session may touch: the effective file roots. */
  directories: string[];
  /** What the client sent (including non-`file:` roots), or undefined when it sent nothing. */
  clientRoots: Root[] | undefined;
  /** Where `directories` came from, for messages and diagnostics. */
  source: 'command-line' | 'client' | 'command-line narrowed by client';
}

export type RootsFetcher = () => Promise<Root[]>;

/**
 * Validates the directories given on the command line and returns their real paths. Throws an
 * Error with a message for the person who started the server (it is a start-up failure).
 */
export async function resolveCliDirectories(dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    const expanded = dir === '~' || dir.startsWith('~/') ? path.join(process.env.HOME ?? '', dir.slice(1)) : dir;
    let real: string;
    try {
      real = await fs.realpath(path.resolve(expanded));
    } catch {
      throw new Error(`Directory not found: ${dir}`);
    }
    const stat = await fs.stat(real);
    if (!stat.isDirectory()) throw new Error(`Not a directory: ${dir}`);
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/**
 * The intersection of two sets of directory trees: a directory survives if it lies inside one of
 * the other set, so nothing outside `bounds` can ever be reached, however wide `wanted` is.
 */
export function intersectTrees(bounds: readonly string[], wanted: readonly string[]): string[] {
  const out = new Set<string>();
  for (const w of wanted) {
    for (const b of bounds) {
      if (isInside(w, b)) out.add(w);
      else if (isInside(b, w)) out.add(b);
    }
  }
  return [...out];
}

/**
 * Holds one session's effective roots.
 *
 * Policy: command-line directories are the outer bound; client roots can only narrow them. With
 * no command-line directories the client's roots define access. A client that declares roots but
 * lists no `file:` root leaves the command-line directories as they are.
 */
export class RootsManager {
  private clientRoots: Root[] | undefined;
  private directories: string[];
  private requestSeq = 0;
  private firstAnswer: Promise<void>;
  private markAnswered!: () => void;
  private fetcher: RootsFetcher | undefined;
  private answered = false;
  private readonly listeners: ((snapshot: RootsSnapshot) => void)[] = [];

  constructor(
    private readonly cliDirectories: readonly string[],
    private readonly log: Logger,
    private readonly waitMs = 5000,
  ) {
    this.directories = [...cliDirectories];
    this.firstAnswer = new Promise((resolve) => (this.markAnswered = resolve));
    void this.firstAnswer.then(() => (this.answered = true));
  }

  /** Called once the client is known to support roots; the first fetch starts at once. */
  enableClientRoots(fetcher: RootsFetcher): void {
    this.fetcher = fetcher;
    void this.refresh();
  }

  /** Client does not support roots: there is nothing to wait for. */
  disableClientRoots(): void {
    this.markAnswered();
  }

  /** Re-reads the client's roots (on `notifications/roots/list_changed`). */
  async refresh(): Promise<void> {
    if (!this.fetcher) return;
    const seq = ++this.requestSeq;
    let roots: Root[];
    try {
      roots = await this.fetcher();
    } catch (error) {
      this.log.warning('roots/list failed; keeping the previous roots', { error: String(error) });
      if (seq === this.requestSeq) this.markAnswered();
      return;
    }
    const candidate = await this.effectiveFor(roots);
    // A newer request was sent while this one was in flight: its answer wins, whenever it lands.
    if (seq !== this.requestSeq) {
      this.log.debug('discarded a stale roots/list answer');
      return;
    }
    const changed = candidate.length !== this.directories.length || candidate.some((d, i) => d !== this.directories[i]);
    this.clientRoots = roots;
    this.directories = candidate;
    this.appliedVersion += 1;
    this.log.info('effective roots updated', { count: candidate.length });
    this.markAnswered();
    if (changed) {
      const snapshot: RootsSnapshot = { directories: [...candidate], clientRoots: roots, source: this.source() };
      for (const listener of this.listeners) {
        try {
          listener(snapshot);
        } catch (error) {
          this.log.warning('a roots listener failed', { error: String(error) });
        }
      }
    }
  }

  /** Called after each client answer that changed the effective directories (not for stale answers). */
  onChange(listener: (snapshot: RootsSnapshot) => void): void {
    this.listeners.push(listener);
  }

  /** The effective roots; waits (bounded) for the client's first answer. */
  /** Changes whenever the effective roots do; lets callers cache what they derive from them. */
  get version(): number {
    return this.appliedVersion;
  }
  private appliedVersion = 0;

  async snapshot(): Promise<RootsSnapshot> {
    if (this.answered) return { directories: [...this.directories], clientRoots: this.clientRoots, source: this.source() };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.firstAnswer,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.waitMs);
        timer.unref();
      }),
    ]);
    if (timer) clearTimeout(timer);
    return { directories: [...this.directories], clientRoots: this.clientRoots, source: this.source() };
  }

  private source(): RootsSnapshot['source'] {
    const clientFileRoots = (this.clientRoots ?? []).some((r) => r.uri.startsWith('file:'));
    if (!clientFileRoots) return this.cliDirectories.length > 0 ? 'command-line' : 'client';
    return this.cliDirectories.length > 0 ? 'command-line narrowed by client' : 'client';
  }

  private async effectiveFor(roots: readonly Root[]): Promise<string[]> {
    const clientDirs: string[] = [];
    for (const root of roots) {
      if (!root.uri.startsWith('file:')) continue;
      try {
        const real = await fs.realpath(fileURLToPath(root.uri));
        if ((await fs.stat(real)).isDirectory() && !clientDirs.includes(real)) clientDirs.push(real);
      } catch {
        this.log.warning('ignoring a client root that is not an existing directory', { uri: root.uri });
      }
    }
    const anyFileRoot = roots.some((r) => r.uri.startsWith('file:'));
    if (this.cliDirectories.length === 0) return clientDirs;
    if (!anyFileRoot) return [...this.cliDirectories];
    return intersectTrees(this.cliDirectories, clientDirs);
  }
}
