/**
 * The log viewer's state and its conversation with the server through the host: what the tool
 * call showed, filters that call tail_log and log_stats again, and a live mode that follows the
 * log through the app-only `viewer_read_new_lines`. No DOM: the view renders `state` on change.
 */
import { resultText, type HostConnection, type ToolResult } from '@suite/shared/app-kit/rpc';
import type { LogFormat } from '../src/formats/parsers.js';
import { classifyLines, columnsOf, histogramOf, searchLines, type Histogram, type Level, type ViewLine } from './model.js';

/** The app-only tool of live mode. */
export const FOLLOW_TOOL = 'viewer_read_new_lines';
/** Most lines kept while following (older ones scroll away). */
export const MAX_LINES = 10_000;

export interface Filters {
  level?: Level;
  grep?: string;
  since?: string;
}

export interface ViewerState {
  path: string | undefined;
  format: LogFormat;
  lines: ViewLine[];
  /** The fields shown as columns (structured logs), from the lines shown. */
  columns: string[];
  histogram: Histogram | undefined;
  filters: Filters;
  following: boolean;
  /** What the server said besides the data (a cut answer, a rotation), or why a call failed. */
  notes: string[];
  error: string | undefined;
}

type Structured = Record<string, unknown>;

export class LogViewerController {
  state: ViewerState = { path: undefined, format: 'plain', lines: [], columns: [], histogram: undefined, filters: {}, following: false, notes: [], error: undefined };
  private cursor: string | undefined;
  private args: Record<string, unknown> = {};
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly host: HostConnection) {
    host.on('ui/notifications/tool-input', (params) => {
      this.args = ((params as { arguments?: Record<string, unknown> }).arguments ?? {});
    });
    host.on('ui/notifications/tool-result', (params) => void this.showResult(params as ToolResult));
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The result of the tool call the host showed the app for. */
  async showResult(result: ToolResult): Promise<void> {
    const s = result.structuredContent as Structured | undefined;
    if (result.isError || !s) return this.set({ error: resultText(result) || 'The tool gave no result to show.' });
    if (Array.isArray(s.lines) && typeof s.path === 'string') {
      this.set({ path: s.path, format: s.format as LogFormat, lines: classifyLines(s.lines as string[], s.format as LogFormat), notes: tailNotes(s), error: undefined });
      await this.loadHistogram();
    } else if (Array.isArray(s.timeline)) {
      const paths = this.args.paths as string[] | undefined;
      this.set({ histogram: histogramOf(s as never), ...(paths?.length === 1 ? { path: paths[0] } : {}), error: undefined });
      if (paths?.length === 1) await this.applyFilters({});
    } else if (Array.isArray(s.matches)) {
      this.set({ lines: searchLines(s.matches as never), notes: s.truncated ? ['More matches than shown: narrow the search.'] : [], error: undefined });
    }
  }

  /** Calls tail_log (and log_stats for the histogram) with these filters. */
  async applyFilters(filters: Filters): Promise<void> {
    if (!this.state.path) return;
    this.set({ filters });
    const args = { path: this.state.path, lines: 5000, ...definedOnly(filters) };
    const result = await this.call('tail_log', args);
    if (!result) return;
    const s = result.structuredContent as Structured;
    this.set({ format: s.format as LogFormat, lines: classifyLines(s.lines as string[], s.format as LogFormat), notes: tailNotes(s), error: undefined });
    await this.loadHistogram();
  }

  async loadHistogram(): Promise<void> {
    if (!this.state.path) return;
    const result = await this.call('log_stats', { paths: [this.state.path], includeRotated: false, topErrors: 1, ...(this.state.filters.since ? { since: this.state.filters.since } : {}) });
    if (result) this.set({ histogram: histogramOf(result.structuredContent as never) });
  }

  /** Starts live mode: a cursor at the log's end, then `poll()` appends what is written. */
  async startFollowing(): Promise<void> {
    if (!this.state.path) return;
    const result = await this.call(FOLLOW_TOOL, { path: this.state.path });
    if (!result) return;
    this.cursor = (result.structuredContent as Structured).cursor as string;
    this.set({ following: true });
  }

  stopFollowing(): void {
    this.cursor = undefined;
    this.set({ following: false });
  }

  /** One step of live mode: the lines appended since the cursor, rotation and truncation noted. */
  async poll(): Promise<void> {
    if (!this.state.following || !this.state.path || this.cursor === undefined) return;
    const result = await this.call(FOLLOW_TOOL, { path: this.state.path, cursor: this.cursor });
    if (!result || !this.state.following) return;
    const s = result.structuredContent as { status: string; lines: string[]; cursor: string; notes: string[] };
    this.cursor = s.cursor;
    if (s.lines.length === 0 && s.notes.length === 0) return;
    const added = classifyLines(s.lines, this.state.format, this.state.lines.at(-1));
    const lines = [...this.state.lines, ...added].slice(-MAX_LINES);
    this.set({ lines, notes: s.notes.length > 0 ? s.notes : s.status === 'rotated' || s.status === 'truncated' ? [`The log was ${s.status}.`] : this.state.notes });
  }

  private async call(name: string, args: Record<string, unknown>): Promise<ToolResult | undefined> {
    try {
      const result = await this.host.callTool(name, args);
      if (result.isError) {
        this.set({ error: resultText(result) });
        return undefined;
      }
      return result;
    } catch (error) {
      this.set({ error: `${name} could not be called: ${(error as Error).message}` });
      return undefined;
    }
  }

  private set(patch: Partial<ViewerState>): void {
    // The columns keep their identity while they stay the same: the view then appends new lines instead of building all again.
    const columns = patch.lines ? columnsOf(patch.lines) : undefined;
    const changed = columns !== undefined && columns.join('\u0000') !== this.state.columns.join('\u0000');
    this.state = { ...this.state, ...patch, ...(changed ? { columns } : {}) };
    for (const listener of this.listeners) listener();
  }
}

function definedOnly(filters: Filters): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => typeof v === 'string' && v !== '')) as Record<string, string>;
}

function tailNotes(s: Structured): string[] {
  const notes: string[] = [];
  // A container runtime's log is named by what wrote it, not by its file.
  if (typeof s.container === 'string') notes.push(`Container ${s.container}`);
  if (s.cutByBytes) notes.push('Older lines were left out to keep the answer small.');
  if (s.stoppedEarly) notes.push(`The tail stopped early (${String(s.stoppedEarly)}).`);
  return notes;
}
