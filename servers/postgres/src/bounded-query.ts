/**
 * A pg query that always uses the extended protocol (Parse/Bind/Execute: PostgreSQL refuses more
 * than one statement in a Parse, which is the first layer of the read-only guarantee) and that
 * fetches rows in chunks through a portal, stopping at a row or byte cap. Rows beyond the cap are
 * never sent by the server: after the cap we Sync, and the unnamed portal dies with the
 * transaction.
 */
import pg from 'pg';
import { JSON_TYPES, type JsonValue } from './values.js';

export interface BoundedResult {
  fields: { name: string; dataTypeID: number }[];
  rows: JsonValue[][];
  /** The command tag (SELECT, SHOW, ...); undefined when the portal was left suspended at the cap. */
  command: string | undefined;
  /** Rows affected or returned, as PostgreSQL reported them (null when suspended). */
  rowCount: number | null;
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | undefined;
}

interface WireConnection {
  sync(): void;
}

/** The parts of pg's Query we hook; they are internal to pg, hence declared here. */
interface QueryInternals {
  handleDataRow(message: { fields: (string | null)[] }): void;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
  handleError(error: Error, connection: WireConnection): void;
  _getRows(connection: WireConnection, rows: number): void;
}

const base = pg.Query.prototype as unknown as QueryInternals;

/** Rows fetched per Execute: small enough to stop near the byte cap, large enough to be cheap. */
const CHUNK_ROWS = 200;

export class BoundedQuery extends pg.Query {
  private kept = 0;
  private bytes = 0;
  private stopReason: 'rows' | 'bytes' | undefined;
  private suspended = false;
  private synced = false;

  constructor(
    text: string,
    values: unknown[],
    private readonly maxRows: number,
    private readonly maxBytes: number,
  ) {
    // rows: chunked portal execution; rowMode 'array': duplicate column names survive.
    super({ text, values, rows: Math.min(CHUNK_ROWS, maxRows + 1), rowMode: 'array', types: JSON_TYPES, queryMode: 'extended' } as pg.QueryConfig);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.stopReason) return;
    if (this.kept >= this.maxRows) {
      this.stopReason = 'rows';
      return;
    }
    let size = 0;
    for (const field of message.fields) size += field === null ? 4 : Buffer.byteLength(field);
    if (this.bytes + size > this.maxBytes && this.kept > 0) {
      this.stopReason = 'bytes';
      return;
    }
    this.bytes += size;
    this.kept += 1;
    base.handleDataRow.call(this, message);
  }

  handlePortalSuspended(connection: WireConnection): void {
    if (this.stopReason || this.kept >= this.maxRows) {
      this.stopReason ??= 'rows';
      this.suspended = true;
      this.sync(connection);
      return;
    }
    base._getRows.call(this, connection, Math.min(CHUNK_ROWS, this.maxRows + 1 - this.kept));
  }

  handleCommandComplete(message: unknown, connection: WireConnection): void {
    // pg syncs here itself when rows is set.
    this.synced = true;
    base.handleCommandComplete.call(this, message, connection);
  }

  handleEmptyQuery(connection: WireConnection): void {
    this.sync(connection);
  }

  handleError(error: Error, connection: WireConnection): void {
    // In chunked mode nothing was synced yet, and the server ignores everything until a Sync.
    this.sync(connection);
    base.handleError.call(this, error, connection);
  }

  private sync(connection: WireConnection): void {
    if (this.synced) return;
    this.synced = true;
    connection.sync();
  }

  /** Runs on a client and resolves with the bounded result. */
  static run(client: pg.ClientBase, text: string, values: unknown[], maxRows: number, maxBytes: number): Promise<BoundedResult> {
    const query = new BoundedQuery(text, values, maxRows, maxBytes);
    return new Promise((resolve, reject) => {
      query.on('error', reject);
      query.on('end', (result: pg.QueryResult<JsonValue[]> | pg.QueryResult<JsonValue[]>[] | undefined) => {
        const last = Array.isArray(result) ? result[result.length - 1] : result;
        resolve({
          fields: (last?.fields ?? []).map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
          rows: last?.rows ?? [],
          command: query.suspended ? undefined : (last?.command ?? undefined),
          rowCount: query.suspended ? null : (last?.rowCount ?? null),
          truncated: query.stopReason !== undefined,
          truncatedBy: query.stopReason,
        });
      });
      client.query(query);
    });
  }
}
