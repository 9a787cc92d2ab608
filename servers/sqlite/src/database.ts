import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ToolError } from '@suite/shared';
import { createDemoDatabase } from './demo-data.js';
import { QueryExecutor } from './executor.js';

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
  /**
   * Start the first query process without waiting for it. The CLI does, so that a client's
   * handshake does not wait for a second Node process to load (its start-up is most of ours);
   * a process that cannot start then fails the first call instead of the start.
   */
  warmInBackground?: boolean;
}

/**
 * One database for the whole process, shared by every session: a read-only connection on the
 * main thread for the server's own bounded catalogue queries (with bound parameters only), and
 * pools of query processes for user SQL, read-only always, plus one writer in write mode.
 */
export class SqliteDatabase {
  readonly insights: string[] = [];

  private constructor(
    /** Real path of the database file. */
    readonly file: string,
    /** The name used in resource URIs (sqlite://<name>/schema). */
    readonly name: string,
    readonly catalog: Database.Database,
    readonly reader: QueryExecutor,
    readonly writer: QueryExecutor | undefined,
    readonly options: Required<Omit<SqliteOptions, 'file' | 'limits' | 'warmInBackground'>> & { limits: SqliteLimits },
    private readonly dispose: () => void,
  ) {}

  get writable(): boolean {
    return this.writer !== undefined;
  }

  get limits(): SqliteLimits {
    return this.options.limits;
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
    let catalog: Database.Database | undefined;
    try {
      catalog = new Database(file, { readonly: true, fileMustExist: true, timeout: 500 });
      catalog.pragma('query_only = ON');
      for (const extension of settings.extensions) catalog.loadExtension(extension);
      // Reading the catalogue once proves the file is a database, before any client connects.
      catalog.prepare('SELECT count(*) FROM sqlite_schema').get();
    } catch (error) {
      catalog?.close();
      dispose();
      throw new Error(`${options.file ?? 'The demo database'} cannot be opened as a SQLite database: ${(error as Error).message}`);
    }
    const reader = new QueryExecutor({ file, mode: 'read', writableServer: settings.allowWrite, extensions: settings.extensions, size: settings.workers, busyTimeoutMs: 1000 });
    const writer = settings.allowWrite ? new QueryExecutor({ file, mode: 'write', writableServer: true, extensions: settings.extensions, size: 1, busyTimeoutMs: 5000 }) : undefined;
    const name = settings.demo ? 'demo' : uriName(file);
    const db = new SqliteDatabase(file, name, catalog, reader, writer, settings, dispose);
    if (options.warmInBackground) {
      // A failure here is met again, and reported, by the first call that needs a process.
      reader.warm().catch(() => undefined);
      return db;
    }
    try {
      await reader.warm();
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
    await this.reader.close();
    await this.writer?.close();
    if (this.catalog.open) this.catalog.close();
    this.dispose();
  }

  /** Runs a catalogue query, turning a locked database into an actionable error. */
  catalogQuery<T>(fn: (db: Database.Database) => T): T {
    try {
      return fn(this.catalog);
    } catch (error) {
      if (error instanceof Database.SqliteError && (error.code === 'SQLITE_BUSY' || error.code === 'SQLITE_LOCKED')) {
        throw ToolError.unavailable('The database is locked by another writer; try again in a moment.');
      }
      throw error;
    }
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
