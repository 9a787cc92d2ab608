/**
 * The schema view's state and its calls through the host, without DOM (Node tests run it against
 * the real server): the tables a schema tool was about, read with the server's app-only
 * `schema_read_page` in the shape both databases share, and the foreign keys between them.
 */
import type { SchemaForeignKey, SchemaPage, SchemaTable } from '../src/apps/schema.js';
import { resultText, type HostConnection, type ToolResult } from './rpc.js';

export type { SchemaColumn, SchemaForeignKey, SchemaTable } from '../src/apps/schema.js';

export interface SchemaOptions {
  /** The app-only tool that reads a page of tables. */
  pageTool: string;
  /** Its arguments for the tables from `offset`, from the arguments of the tool call shown. */
  pageArgs(toolArgs: Record<string, unknown>, offset: number): Record<string, unknown>;
}

export interface SchemaState {
  tables: SchemaTable[];
  /** More tables follow those read. */
  more: boolean;
  loading: boolean;
  error: string | undefined;
}

/** One key per table, schema and name together (either may hold any character, dots included). */
export function tableKey(schema: string | null, name: string): string {
  return JSON.stringify([schema, name]);
}

/** How a table is named to a reader: schema.name where there are schemas. */
export function tableLabel(schema: string | null, name: string): string {
  return schema === null ? name : `${schema}.${name}`;
}

export interface ForeignKeyLink {
  from: SchemaTable;
  key: SchemaForeignKey;
  /** The referenced table's key (see tableKey), whether or not it was read. */
  to: string;
}

/** Every foreign key of the tables read, in their order. */
export function foreignKeyLinks(tables: SchemaTable[]): ForeignKeyLink[] {
  return tables.flatMap((from) => from.foreignKeys.map((key) => ({ from, key, to: tableKey(key.schema, key.table) })));
}

export class SchemaController {
  state: SchemaState = { tables: [], more: false, loading: false, error: undefined };
  private args: Record<string, unknown> = {};
  private next = 0;
  private generation = 0;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly host: HostConnection,
    private readonly options: SchemaOptions,
  ) {
    host.on('ui/notifications/tool-input', (params) => {
      this.args = (params as { arguments?: Record<string, unknown> }).arguments ?? {};
    });
    host.on('ui/notifications/tool-result', (params) => void this.showResult(params as ToolResult));
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** A schema tool's result: its error as it is, else the tables it was about, read afresh. */
  async showResult(result: ToolResult): Promise<void> {
    const generation = ++this.generation;
    this.next = 0;
    if (result.isError) return this.set({ tables: [], more: false, loading: false, error: resultText(result) || 'The tool failed.' });
    // A page still on its way belongs to the result this one replaces: its answer is dropped.
    this.set({ tables: [], more: false, loading: true, error: undefined });
    await this.readPage(generation);
  }

  /** The tables after those read. */
  async loadMore(): Promise<void> {
    if (this.state.loading || !this.state.more) return;
    this.set({ loading: true });
    await this.readPage(this.generation);
  }

  private async readPage(generation: number): Promise<void> {
    try {
      const result = await this.host.callTool(this.options.pageTool, this.options.pageArgs(this.args, this.next));
      if (generation !== this.generation) return;
      if (result.isError) return this.set({ loading: false, error: resultText(result) });
      const page = result.structuredContent as SchemaPage;
      this.next = page.offset + page.tables.length;
      this.set({ tables: [...this.state.tables, ...page.tables], more: page.truncated, loading: false, error: undefined });
    } catch (error) {
      if (generation === this.generation) this.set({ loading: false, error: `${this.options.pageTool} could not be called: ${(error as Error).message}` });
    }
  }

  private set(patch: Partial<SchemaState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }
}
