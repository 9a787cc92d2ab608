/**
 * Running one user statement with bounded output, through pg's public query API and the cursor
 * support its authors maintain for exactly this (pg-cursor), so that a pg release cannot silently
 * change how rows are limited.
 *
 * - Our preamble (BEGIN READ ONLY and a snapshot-taking no-op) goes first, as one simple query of
 *   our own text.
 * - The user's statement always goes over the extended protocol (pg-cursor sends Parse/Bind/
 *   Describe/Execute): PostgreSQL refuses more than one statement in a Parse, which is the first
 *   layer of the read-only guarantee.
 * - Rows are read from the cursor's portal in chunks (Execute with a row count), and only while
 *   the row and byte caps allow; at a cap the portal is closed, so rows past it are never sent.
 */
import Cursor from 'pg-cursor';
import type pg from 'pg';
import { parserFor, type JsonValue } from './values.js';

export interface BoundedResult {
  fields: { name: string; dataTypeID: number }[];
  rows: JsonValue[][];
  /** The command tag (SELECT, SHOW, ...); undefined when the portal was closed at a cap. */
  command: string | undefined;
  /** Rows affected or returned, as PostgreSQL reported them (null when closed at a cap). */
  rowCount: number | null;
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | undefined;
  /** NOTICE and WARNING messages the statement raised (the first few). */
  notices: string[];
}

const MAX_NOTICES = 20;

/** A row as the cursor hands it over: every value as PostgreSQL's text, converted by our own parsers. */
type RawRow = (string | null)[];

/** Rows as arrays of PostgreSQL's text: no conversion by pg (ours, per type, happens in RowCollector). */
const CURSOR_CONFIG = { rowMode: 'array', types: { getTypeParser: () => (value: string) => value } } as const;

/** "INSERT 0 5" -> INSERT, 5; "SELECT 3" -> SELECT, 3; "CREATE TABLE" -> CREATE TABLE, null. */
function parseTag(text: string): { command: string | undefined; rowCount: number | null } {
  const match = /^([A-Za-z]+(?: [A-Za-z]+)*?)(?: (\d+))?(?: (\d+))?$/.exec(text);
  if (!match) return { command: undefined, rowCount: null };
  const count = match[3] ?? match[2];
  return { command: match[1], rowCount: count === undefined ? null : Number(count) };
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

  describe(fields: readonly { dataTypeID: number }[]): void {
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

/** What the statement tells as it runs, straight from pg's message handling. */
interface CursorListener {
  fields(fields: { name: string; dataTypeID: number }[]): void;
  /** CommandComplete: every row has arrived (pg-cursor now closes the portal and syncs). */
  complete(tag: string | undefined): void;
}

/**
 * pg-cursor as it is, plus what pg's client may ask of any query and pg-cursor does not answer:
 * COPY ... FROM STDIN is refused (CopyFail) and COPY ... TO STDOUT data is dropped, instead of a
 * missing handler throwing inside pg's message loop. It also reports the columns and the full
 * command tag (pg's result keeps only its first word, "CREATE" for "CREATE TABLE") as they arrive,
 * each after pg-cursor's own handler ran.
 */
class BoundedCursor extends Cursor<RawRow> {
  constructor(
    text: string,
    values: unknown[],
    private readonly listener: CursorListener,
  ) {
    super(text, values, CURSOR_CONFIG);
  }

  handleRowDescription(message: { fields: { name: string; dataTypeID: number }[] }): void {
    cursorHandler('handleRowDescription').call(this, message);
    this.listener.fields(message.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })));
  }

  handleCommandComplete(message: { text?: string }): void {
    cursorHandler('handleCommandComplete').call(this, message);
    this.listener.complete(message.text);
  }

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported');
  }

  handleCopyData(): void {}
}

/** pg-cursor's own handler of a message (the handlers pg's client calls on any query it runs). */
function cursorHandler(name: 'handleRowDescription' | 'handleCommandComplete'): (this: BoundedCursor, message: unknown) => void {
  return (Cursor.prototype as unknown as Record<typeof name, (this: BoundedCursor, message: unknown) => void>)[name];
}

export interface BoundedRunOptions {
  maxRows: number;
  maxBytes: number;
  /** Our own statements to run first, as one simple query (e.g. BEGIN READ ONLY and the snapshot no-op). */
  preamble?: readonly string[];
  /**
   * Called once, as soon as the portal will not be read again (complete: synchronously from pg's
   * message handling; failed; or closed at a cap). A caller can queue its ROLLBACK right there: pg
   * sends it the moment the cursor's ReadyForQuery arrives.
   */
  onPortalDone?: () => void;
  /** Called right before the statement itself goes out (after the preamble succeeded). */
  onSent?: () => void;
}

/** Runs one statement on a client and resolves with the bounded result. */
export async function runBounded(client: pg.ClientBase, text: string, values: unknown[], options: BoundedRunOptions): Promise<BoundedResult> {
  const collector = new RowCollector(options.maxRows, options.maxBytes);
  const portalDone = new PortalDone(options.onPortalDone);
  const notices: string[] = [];
  const onNotice = (notice: { severity?: string; message?: string; hint?: string }): void => {
    if (notices.length < MAX_NOTICES) notices.push(`${notice.severity ?? 'NOTICE'}: ${notice.message ?? ''}${notice.hint ? ` (HINT: ${notice.hint})` : ''}`);
  };
  client.on('notice', onNotice);
  let fields: BoundedResult['fields'] = [];
  let tag: string | undefined;
  let complete = false;
  let onComplete: (() => void) | undefined;
  let received = 0;
  const cursor = new BoundedCursor(text, values, {
    fields: (described) => {
      fields = described;
      collector.describe(described);
    },
    complete: (commandTag) => {
      tag = commandTag;
      complete = true;
      // The transaction may end now (pg sends the queued ROLLBACK the moment the cursor is done), and the
      // answer need not wait for pg-cursor's Close/Sync round trip: every row is here.
      portalDone.fire();
      onComplete?.();
    },
  });
  cursor.on('row', (row: RawRow) => {
    received++;
    collector.add(row);
  });
  try {
    if (options.preamble && options.preamble.length > 0) await client.query(options.preamble.join('; '));
    options.onSent?.();
    client.query(cursor);
    let drained = false;
    while (!complete && !drained && !collector.stopReason) {
      const asked = collector.nextChunk();
      received = 0;
      await new Promise<void>((resolve, reject) => {
        onComplete = resolve;
        cursor.read(asked, (error) => (error ? reject(error) : resolve()));
      });
      // Fewer rows than asked for, and no CommandComplete: an empty query (pg-cursor has synced).
      drained = !complete && received < asked;
    }
    if (!complete && !drained) {
      // At a cap: close the portal (the rows past it are never sent). The ROLLBACK queued right after goes
      // out with the Close's ReadyForQuery; the connection returns to the pool only once it is confirmed.
      void cursor.close().catch(() => undefined);
    }
  } finally {
    client.off('notice', onNotice);
    // Whatever ended the wait (an error, say), the caller may close the transaction now.
    portalDone.fire();
  }
  const parsed = complete && tag !== undefined ? parseTag(tag) : { command: undefined, rowCount: null };
  return {
    fields,
    rows: collector.rows,
    command: parsed.command,
    rowCount: parsed.rowCount,
    truncated: collector.stopReason !== undefined,
    truncatedBy: collector.stopReason,
    notices,
  };
}
