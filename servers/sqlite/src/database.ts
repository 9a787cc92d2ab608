import { realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import Database from './sqlite-addon.js';
import type BetterSqlite3 from 'better-sqlite3';
import { ToolError, type Logger } from '@suite/shared';
import { createDemoDatabase } from './demo-data.js';
import { QueryExecutor, lockedMessage } from './executor.js';

export interface SqliteLimits {
  /** Time limit of one call when the call does not ask for less. */
  timeoutMs: number;
  /** Rows a read returns when the call does not say. */
  defaultMaxRows: number;
  /** The most rows any call may ask for. */
  hardMaxRows: number;
  /** Budget for the rows of one answer (JSON bytes); the text table is about as large again. */
  maxBytes: number;
  /** Longer text cells are cut (and the answer marked truncated). */
  maxCellChars: number;
}

export const DEFAULT_LIMITS: SqliteLimits = {
  timeoutMs: 30_000,
  defaultMaxRows: 500,
  hardMaxRows: 10_000,
  maxBytes: 1024 * 1024,
  maxCellChars: 32 * 1024,
};

export interface SqliteOptions {
  /** The database file; must exist. Omit with demo. */
  file?: string;
  /** The name in resource URIs (sqlite://<name>/...); by default taken from the file name. */
  name?: string;
  /** Use the embedded sample database instead of a file. */
  demo?: boolean;
  /** Register write_query and create_table. */
  allowWrite?: boolean;
  /** In write mode, let write_query run ATTACH/DETACH. */
  allowAttach?: boolean;
  /** In write mode, let write_query run VACUUM INTO. */
  allowVacuumInto?: boolean;
  /** SQLite extensions the operator loads into every connection at start-up. */
  extensions?: string[];
  /** Query processes that may run reads at the same time. */
  workers?: number;
  limits?: Partial<SqliteLimits>;
  /** Where to say that the database file was replaced (the server then serves the new one). */
  log?: Logger;
  /**
   * Start the first query process without waiting for it. The CLI does, so that a client's
   * handshake does not wait for a second Node process to load (its start-up is most of ours);
   * a process that cannot start then fails the first call instead of the start.
   */
  warmInBackground?: boolean;
}

/** What identifies the file at the configured path: a file renamed over it, or created anew, has another. */
interface FileIdentity {
  dev: number;
  ino: number;
}

/** The connections on one file: the catalogue connection and the query processes. */
interface Generation {
  identity: FileIdentity;
  catalog: BetterSqlite3.Database;
  reader: QueryExecutor;
  writer: QueryExecutor | undefined;
}

/** How long a catalogue query waits for another connection's lock (it runs on the main thread). */
const CATALOG_BUSY_MS = 500;
const READER_BUSY_MS = 1000;
const WRITER_BUSY_MS = 5000;

/**
 * One database for the whole process, shared by every session: a read-only connection on the
 * main thread for the server's own bounded catalogue queries (with bound parameters only), and
 * pools of query processes for user SQL, read-only always, plus one writer in write mode.
 *
 * Every call first checks that the configured path still holds the file the connections were
 * opened on (one stat). Open connections keep reading a deleted file, and a file renamed over
 * the path is a new file they never see: without the check, a deleted database would still
 * answer (and take writes nobody can ever read), and a replaced one would be served stale.
 */
export class SqliteDatabase {
  readonly insights: string[] = [];

  private constructor(
    /** Real path of the database file. */
    readonly file: string,
    /** The path as the user gave it, for messages. */
    private readonly given: string,
    /** The name used in resource URIs (sqlite://<name>/schema). */
    readonly name: string,
    private current: Generation,
    readonly options: Required<Omit<SqliteOptions, 'file' | 'name' | 'limits' | 'log' | 'warmInBackground'>> & { limits: SqliteLimits },
    private readonly log: Logger | undefined,
    private readonly dispose: () => void,
  ) {}

  get writable(): boolean {
    return this.options.allowWrite;
  }

  get limits(): SqliteLimits {
    return this.options.limits;
  }

  /** The query processes now (for tests and diagnostics); calls go through `executors()`. */
  get reader(): QueryExecutor {
    return this.current.reader;
  }

  static async open(options: SqliteOptions): Promise<SqliteDatabase> {
    const settings = {
      demo: options.demo === true,
      allowWrite: options.allowWrite === true,
      allowAttach: options.allowAttach === true,
      allowVacuumInto: options.allowVacuumInto === true,
      extensions: options.extensions ?? [],
      workers: options.workers ?? 2,
      limits: { ...DEFAULT_LIMITS, ...options.limits },
    };
    let file: string;
    let dispose = (): void => undefined;
    if (settings.demo) {
      const demo = createDemoDatabase();
      file = demo.file;
      dispose = demo.dispose;
    } else {
      if (!options.file) throw new Error('No database file given.');
      file = existingDatabaseFile(options.file);
    }
    let generation: Generation;
    try {
      generation = openGeneration(file, identityOf(statSync(file)), settings);
    } catch (error) {
      dispose();
      throw new Error(`${options.file ?? 'The demo database'} cannot be opened as a SQLite database: ${(error as Error).message}`);
    }
    const name = options.name ?? (settings.demo ? 'demo' : uriName(file));
    const db = new SqliteDatabase(file, options.file ?? 'the demo database', name, generation, settings, options.log, dispose);
    if (options.warmInBackground) {
      // A failure here is met again, and reported, by the first call that needs a process.
      generation.reader.warm().catch(() => undefined);
      return db;
    }
    try {
      await generation.reader.warm();
    } catch (error) {
      await db.close();
      throw error;
    }
    return db;
  }

  /** URI of the schema resource. */
  get schemaUri(): string {
    return `sqlite://${this.name}/schema`;
  }

  tableUri(table: string): string {
    return `sqlite://${this.name}/tables/${encodeURIComponent(table)}`;
  }

  async close(): Promise<void> {
    await closeGeneration(this.current, 'The server is shutting down.', this.file);
    this.dispose();
  }

  /**
   * The query processes for the file now at the configured path: a clear error when there is
   * none, and new processes when the file was replaced since the last call.
   */
  executors(): { reader: QueryExecutor; writer: QueryExecutor | undefined; identity: FileIdentity } {
    this.checkFile();
    return { reader: this.current.reader, writer: this.current.writer, identity: this.current.identity };
  }

  /**
   * After a write: whether the file at the path is still the one the write went to. A file
   * deleted or replaced while the statement ran took the change with it.
   */
  stillAt(identity: FileIdentity): boolean {
    const now = this.statPath();
    return now !== undefined && now.dev === identity.dev && now.ino === identity.ino;
  }

  /** Runs a catalogue query, turning a locked database into an actionable error. */
  catalogQuery<T>(fn: (db: BetterSqlite3.Database) => T): T {
    this.checkFile();
    try {
      return fn(this.current.catalog);
    } catch (error) {
      if (error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'))) {
        throw ToolError.unavailable(lockedMessage(CATALOG_BUSY_MS));
      }
      throw error;
    }
  }

  private statPath(): FileIdentity | undefined {
    try {
      const stat = statSync(this.file);
      return stat.isFile() ? identityOf(stat) : undefined;
    } catch {
      return undefined;
    }
  }

  private checkFile(): void {
    const now = this.statPath();
    if (!now) {
      throw ToolError.notFound(
        `The database file ${this.given} no longer exists: it was deleted or moved away while the server was running. ` +
          'Put a database back at that path (the server then uses it), or restart the server with the new location.',
      );
    }
    const { identity } = this.current;
    if (now.dev === identity.dev && now.ino === identity.ino) return;
    let next: Generation;
    try {
      next = openGeneration(this.file, now, this.options);
    } catch (error) {
      throw ToolError.unavailable(
        `The database file ${this.given} was replaced by a file that cannot be opened as a SQLite database (${(error as Error).message}). Try again once it is complete.`,
      );
    }
    const old = this.current;
    this.current = next;
    // Calls still running on the old file fail with this; the processes are stopped, not left reading it.
    void closeGeneration(old, `The database file ${this.given} was replaced while the call ran; try again (the new file is used from now on).`);
    this.log?.warning(`the database file was replaced; now serving the new file at ${this.given}`);
  }
}

function identityOf(stat: Stats): FileIdentity {
  return { dev: stat.dev, ino: stat.ino };
}

type GenerationSettings = Pick<SqliteDatabase['options'], 'allowWrite' | 'extensions' | 'workers'>;

/** Opens the catalogue connection (reading the schema once proves the file is a database) and the executors. */
function openGeneration(file: string, identity: FileIdentity, settings: GenerationSettings): Generation {
  // A write mode server recovers what a writer killed mid-transaction left (a hot journal), as any
  // writable SQLite connection would; a read-only one never writes, and reports the file as it is.
  if (settings.allowWrite) rollBackHotJournal(file);
  let catalog: BetterSqlite3.Database | undefined;
  try {
    catalog = new Database(file, { readonly: true, fileMustExist: true, timeout: CATALOG_BUSY_MS });
    catalog.pragma('query_only = ON');
    for (const extension of settings.extensions) catalog.loadExtension(extension);
    catalog.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (error) {
    catalog?.close();
    throw error;
  }
  const common = { file, writableServer: settings.allowWrite, extensions: settings.extensions };
  const reader = new QueryExecutor({ ...common, mode: 'read', size: settings.workers, busyTimeoutMs: READER_BUSY_MS });
  const writer = settings.allowWrite ? new QueryExecutor({ ...common, mode: 'write', size: 1, busyTimeoutMs: WRITER_BUSY_MS }) : undefined;
  return { identity, catalog, reader, writer };
}

async function closeGeneration(generation: Generation, reason: string, file?: string): Promise<void> {
  await generation.reader.close(reason);
  await generation.writer?.close(reason);
  if (generation.catalog.open) generation.catalog.close();
  // A writer stopped mid-statement (the server shutting down with a write in flight) leaves a hot
  // journal that only a writable connection rolls back; every read-only opener of the file (other
  // programs, the next run's catalogue) fails until then. Roll it back now, while we still can.
  if (generation.writer && file) rollBackHotJournal(file);
}

/** Opens the file writable once, which rolls back a hot journal, and closes it; a locked or gone file is left as it is. */
function rollBackHotJournal(file: string): void {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 1000 });
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch {
    // Another process holds it, or it went away: its next writer recovers the journal.
  } finally {
    db?.close();
  }
}

function existingDatabaseFile(given: string): string {
  let real: string;
  try {
    real = realpathSync(given);
  } catch {
    throw new Error(`Database file not found: ${given}. The server never creates a database; check the path (or create the file with sqlite3 first).`);
  }
  if (!statSync(real).isFile()) throw new Error(`${given} is not a file.`);
  return real;
}

/** A URI-safe authority from the file name: "Sales Data.sqlite" becomes "sales-data". */
function uriName(file: string): string {
  const base = path.basename(file).replace(/\.(db|sqlite3?|db3)$/i, '');
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name || 'database';
}
