/**
 * Running one user statement with bounded output, in as few round trips as the protocol allows.
 *
 * - Always the extended protocol (Parse/Bind/Execute): PostgreSQL refuses more than one statement
 *   in a Parse, which is the first layer of the read-only guarantee.
 * - Our own preamble (BEGIN READ ONLY and a snapshot-taking no-op) rides in the same write, ahead
 *   of the user's Parse, so a small read-only query costs one round trip before the answer.
 * - Rows come through the unnamed portal in chunks (Execute with a row count, then Sync). Inside a
 *   transaction block the portal survives the Sync, so more chunks are fetched only while the row
 *   and byte caps allow; rows past the cap are never sent, and the portal dies with the transaction.
 */
import pg from 'pg';
import { parserFor, type JsonValue } from './values.js';

export interface BoundedResult {
  fields: { name: string; dataTypeID: number }[];
  rows: JsonValue[][];
  /** The command tag (SELECT, SHOW, ...); undefined when the portal was left suspended at the cap. */
  command: string | undefined;
  /** Rows affected or returned, as PostgreSQL reported them (null when suspended). */
  rowCount: number | null;
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | undefined;
  /** NOTICE and WARNING messages the statement raised (the first few). */
  notices: string[];
}

const MAX_NOTICES = 20;

interface WireConnection {
  parse(config: { text: string; name?: string; types?: number[] }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
  stream: { cork?: () => void; uncork?: () => void };
}

interface RowDescription {
  fields: { name: string; dataTypeID: number }[];
}
interface DataRow {
  fields: (string | null)[];
}
interface CommandComplete {
  text?: string;
}

/** "INSERT 0 5" -> INSERT, 5; "SELECT 3" -> SELECT, 3; "BEGIN" -> BEGIN, null. */
function parseTag(message: CommandComplete): { command: string | undefined; rowCount: number | null } {
  const match = /^([A-Za-z]+(?: [A-Za-z]+)*?)(?: (\d+))?(?: (\d+))?$/.exec(message.text ?? '');
  if (!match) return { command: undefined, rowCount: null };
  const count = match[3] ?? match[2];
  return { command: match[1], rowCount: count === undefined ? null : Number(count) };
}

/** The parts of pg's Query we hook; they are internal to pg, hence declared here. */
interface QueryInternals {
  handleRowDescription(message: RowDescription): void;
  handleCommandComplete(message: CommandComplete, connection: WireConnection): void;
  handleError(error: Error, connection: WireConnection): void;
  prepare(connection: WireConnection): void;
}

/** Runs the caller's onPortalDone at most once. */
class PortalDone {
  private pending: (() => void) | undefined;
  constructor(callback: (() => void) | undefined) {
    this.pending = callback;
  }
  fire(): void {
    const callback = this.pending;
    this.pending = undefined;
    callback?.();
  }
}

const base = pg.Query.prototype as unknown as QueryInternals;

/** Rows asked for in the first Execute: most answers fit, and a wide-row surprise stays small. */
const FIRST_CHUNK_ROWS = 100;

/** Keeps rows until the row or byte cap, parsing each value with the per-type converters. */
class RowCollector {
  readonly rows: JsonValue[][] = [];
  bytes = 0;
  stopReason: 'rows' | 'bytes' | undefined;
  private parsers: ((text: string) => JsonValue)[] = [];

  constructor(
    readonly maxRows: number,
    readonly maxBytes: number,
  ) {}

  describe(fields: RowDescription['fields']): void {
    this.parsers = fields.map((f) => parserFor(f.dataTypeID));
  }

  add(fields: (string | null)[]): void {
    if (this.stopReason) return;
    if (this.rows.length >= this.maxRows) {
      this.stopReason = 'rows';
      return;
    }
    const row = fields.map((field, i) => (field === null ? null : this.parsers[i]!(field)));
    // Counted as the JSON the client will receive: escaping can make that several times the raw size.
    const size = Buffer.byteLength(JSON.stringify(row));
    if (this.bytes + size > this.maxBytes && this.rows.length > 0) {
      this.stopReason = 'bytes';
      return;
    }
    this.bytes += size;
    this.rows.push(row);
  }

  /** How many rows to ask for next: enough to reach a cap (plus the probe row), no more. */
  nextChunk(): number {
    const rowsLeft = this.maxRows + 1 - this.rows.length;
    if (this.rows.length === 0) return Math.min(FIRST_CHUNK_ROWS, rowsLeft);
    const average = Math.max(1, this.bytes / this.rows.length);
    const byBytes = Math.floor((this.maxBytes - this.bytes) / average) + 1;
    return Math.max(1, Math.min(rowsLeft, byBytes, 2000));
  }
}

/** Parse/Bind/Describe/Execute(n)/Sync for the user's statement, preceded by our preamble. */
class OpeningQuery extends pg.Query {
  fields: RowDescription['fields'] = [];
  suspended = false;
  command: string | undefined;
  rowCount: number | null = null;
  private preambleLeft: number;

  constructor(
    text: string,
    values: unknown[],
    private readonly collector: RowCollector,
    private readonly preamble: readonly string[],
    private readonly portalDone: PortalDone,
  ) {
    super({ text, values, rows: collector.nextChunk(), queryMode: 'extended' } as pg.QueryConfig);
    this.preambleLeft = preamble.length;
  }

  prepare(connection: WireConnection): void {
    for (const text of this.preamble) {
      connection.parse({ text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '', rows: 0 });
    }
    base.prepare.call(this, connection);
  }

  /** pg calls this from prepare() to send Execute; we add the Sync right away (one round trip). */
  _getRows(connection: WireConnection, rows: number): void {
    connection.execute({ portal: '', rows });
    connection.sync();
    // pg would Sync again after CommandComplete when rows is set; it must not.
    (this as unknown as { rows: number | undefined }).rows = undefined;
  }

  handleRowDescription(message: RowDescription): void {
    this.fields = message.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
    this.collector.describe(message.fields);
    base.handleRowDescription.call(this, message);
  }

  handleDataRow(message: DataRow): void {
    this.collector.add(message.fields);
  }

  handleCommandComplete(message: CommandComplete, connection: WireConnection): void {
    if (this.preambleLeft > 0) {
      this.preambleLeft -= 1;
      return;
    }
    ({ command: this.command, rowCount: this.rowCount } = parseTag(message));
    this.portalDone.fire();
    base.handleCommandComplete.call(this, message, connection);
  }

  handlePortalSuspended(): void {
    this.suspended = true;
    if (this.collector.stopReason) this.portalDone.fire();
  }

  handleEmptyQuery(): void {
    // Already synced.
    this.portalDone.fire();
  }

  handleError(error: Error, connection: WireConnection): void {
    this.portalDone.fire();
    base.handleError.call(this, error, connection);
  }
}

/** Execute(n)/Sync on the still-open unnamed portal: the next chunk of rows. */
class PortalFetch implements pg.Submittable {
  suspended = false;
  command: string | undefined;
  rowCount: number | null = null;
  private settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  readonly done: Promise<void>;

  constructor(
    private readonly collector: RowCollector,
    private readonly rows: number,
    private readonly portalDone: PortalDone,
  ) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  submit(connection: unknown): void {
    const wire = connection as WireConnection;
    wire.stream.cork?.();
    try {
      wire.execute({ portal: '', rows: this.rows });
      wire.sync();
    } finally {
      wire.stream.uncork?.();
    }
  }

  handleRowDescription(): void {}
  handleDataRow(message: DataRow): void {
    this.collector.add(message.fields);
  }
  handlePortalSuspended(): void {
    this.suspended = true;
    if (this.collector.stopReason) this.portalDone.fire();
  }
  handleCommandComplete(message: CommandComplete): void {
    ({ command: this.command, rowCount: this.rowCount } = parseTag(message));
    this.portalDone.fire();
  }
  handleEmptyQuery(): void {
    this.portalDone.fire();
  }
  handleCopyInResponse(connection: WireConnection): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported');
  }
  handleCopyData(): void {}
  handleError(error: Error): void {
    this.portalDone.fire();
    this.settle?.reject(error);
  }
  handleReadyForQuery(): void {
    this.settle?.resolve();
  }
}

export interface BoundedRunOptions {
  maxRows: number;
  maxBytes: number;
  /** Our own statements to run first in the same round trip (e.g. BEGIN READ ONLY). */
  preamble?: readonly string[];
  /**
   * Called once, synchronously from pg's message handling, as soon as the portal will not be read
   * again (complete, failed, or cut at a cap). A caller can queue its ROLLBACK right there: pg sends
   * it the moment ReadyForQuery arrives, usually from the same network read.
   */
  onPortalDone?: () => void;
}

/** Runs one statement on a client and resolves with the bounded result. */
export async function runBounded(client: pg.ClientBase, text: string, values: unknown[], options: BoundedRunOptions): Promise<BoundedResult> {
  const collector = new RowCollector(options.maxRows, options.maxBytes);
  const portalDone = new PortalDone(options.onPortalDone);
  const opening = new OpeningQuery(text, values, collector, options.preamble ?? [], portalDone);
  const notices: string[] = [];
  const onNotice = (notice: { severity?: string; message?: string; hint?: string }): void => {
    if (notices.length < MAX_NOTICES) notices.push(`${notice.severity ?? 'NOTICE'}: ${notice.message ?? ''}${notice.hint ? ` (HINT: ${notice.hint})` : ''}`);
  };
  client.on('notice', onNotice);
  let suspended: boolean;
  let command: string | undefined;
  let rowCount: number | null;
  try {
    await new Promise<void>((resolve, reject) => {
      opening.on('error', reject);
      opening.on('end', () => resolve());
      client.query(opening);
    });
    ({ suspended, command, rowCount } = opening);
    while (suspended && !collector.stopReason) {
      const fetch = new PortalFetch(collector, collector.nextChunk(), portalDone);
      client.query(fetch);
      await fetch.done;
      ({ suspended, command, rowCount } = fetch);
    }
  } finally {
    client.off('notice', onNotice);
    // Whatever ended the wait (a rejected submit, say), the caller may close the transaction now.
    portalDone.fire();
  }
  if (suspended) collector.stopReason ??= 'rows';
  return {
    fields: opening.fields,
    rows: collector.rows,
    command: suspended ? undefined : command,
    rowCount: suspended ? null : rowCount,
    truncated: collector.stopReason !== undefined,
    truncatedBy: collector.stopReason,
    notices,
  };
}
