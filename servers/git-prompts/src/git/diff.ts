import { promises as fs } from 'node:fs';
import path from 'node:path';
import { countOf, formatBytes } from '@suite/shared';
import type { DiffBudget } from '../config.js';
import { cutOutput, type GitRepository } from './repository.js';
import { literalPathspec } from './repo-paths.js';

/** Which two states to compare. Object ids only: revisions are resolved before they get here. */
export type DiffSource =
  | { kind: 'staged' }
  | { kind: 'unstaged' }
  /** The working tree against a commit (`git diff <commit>`). */
  | { kind: 'worktree'; against: string }
  /** Two commits; `from` undefined means the empty tree (a root commit). */
  | { kind: 'commits'; from: string | undefined; to: string };

export interface DiffRequest {
  source: DiffSource;
  budget: DiffBudget;
  contextLines?: number;
  /** One path (relative to the top, already checked): only its diff, and the exclusions do not apply. */
  path?: string;
  signal?: AbortSignal;
  /** Said after the list of what was left out: how to see one of those files. */
  seeMore?: string;
}

export interface DiffFile {
  path: string;
  /** The path before a rename or copy. */
  from?: string;
  /** git's status letter: A, M, D, R, C, T, U. */
  status: string;
  binary: boolean;
  shown: 'full' | 'cut' | 'summary' | 'excluded' | 'over-budget';
  added: number;
  deleted: number;
}

export interface RenderedDiff {
  /** The diff within the budget, then a note of what was left out. '' when nothing changed. */
  text: string;
  files: DiffFile[];
  /** The list of changed files itself was too long to read whole. */
  listTruncated: boolean;
}

interface RawEntry {
  status: string;
  oldOid: string;
  newOid: string;
  path: string;
  from?: string;
}

const ZERO_OID = /^0+$/;
const STATUS_WORDS: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed', U: 'unmerged' };
/** How many left-out files the note names one by one; the rest are counted. */
const NAMED_IN_NOTE = 40;

/** The command and the object ids of a source; options go between them (diff-tree wants the ids last). */
function sourceArgs(source: DiffSource): { command: string[]; revisions: string[] } {
  switch (source.kind) {
    case 'staged':
      return { command: ['diff', '--cached'], revisions: [] };
    case 'unstaged':
      return { command: ['diff'], revisions: [] };
    case 'worktree':
      return { command: ['diff'], revisions: [source.against] };
    case 'commits':
      return source.from ? { command: ['diff'], revisions: [source.from, source.to] } : { command: ['diff-tree', '-r', '--root', '--no-commit-id'], revisions: [source.to] };
  }
}

/** Never an external diff program or a textconv driver; no colour; submodules are not entered. */
const COMMON = ['--no-color', '--no-ext-diff', '--no-textconv', '-M', '--ignore-submodules=dirty'];

/** Parses `--raw -z --no-abbrev`: `:modes oids status NUL path NUL` (two paths for renames and copies). */
export function parseRaw(text: string): RawEntry[] {
  const fields = text.split('\0');
  const entries: RawEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const meta = fields[i]!;
    if (!meta.startsWith(':')) continue;
    const parts = meta.slice(1).split(' ');
    const status = (parts[4] ?? '').charAt(0);
    const oldOid = parts[2] ?? '';
    const newOid = parts[3] ?? '';
    if (status === 'R' || status === 'C') {
      entries.push({ status, oldOid, newOid, from: fields[i + 1] ?? '', path: fields[i + 2] ?? '' });
      i += 2;
    } else {
      entries.push({ status, oldOid, newOid, path: fields[i + 1] ?? '' });
      i += 1;
    }
  }
  return entries;
}

/** Splits a patch into one section per file, in git's order. */
export function splitPatch(patch: string): string[] {
  if (patch === '') return [];
  const starts: number[] = [];
  const header = /^diff --(git|cc|combined) /gm;
  for (let m = header.exec(patch); m; m = header.exec(patch)) starts.push(m.index);
  return starts.map((start, i) => patch.slice(start, starts[i + 1] ?? patch.length));
}

function isBinarySection(section: string): boolean {
  return /^Binary files .* differ$/m.test(section) || /^GIT binary patch$/m.test(section);
}

function countLines(section: string): { added: number; deleted: number } {
  let added = 0;
  let deleted = 0;
  let inHunk = false;
  for (const line of section.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) added++;
    else if (inHunk && line.startsWith('-')) deleted++;
  }
  return { added, deleted };
}

/** Cuts a section at a line boundary within `limit` bytes; returns the kept text and how many lines were dropped. */
function cutSection(section: string, limit: number): { text: string; droppedLines: number } {
  const bytes = Buffer.from(section, 'utf8');
  if (bytes.length <= limit) return { text: section, droppedLines: 0 };
  let kept = bytes.subarray(0, limit).toString('utf8');
  const lastNewline = kept.lastIndexOf('\n');
  kept = lastNewline > 0 ? kept.slice(0, lastNewline + 1) : '';
  // A cut inside a multi-byte character decodes as U+FFFD at the very end: dropped with its line.
  const droppedLines = section.slice(kept.length).split('\n').filter(Boolean).length;
  return { text: kept, droppedLines };
}


function describe(entry: Pick<DiffFile, 'status' | 'path' | 'from'>): string {
  return entry.from ? `${entry.from} -> ${entry.path} (${STATUS_WORDS[entry.status] ?? entry.status})` : `${entry.path} (${STATUS_WORDS[entry.status] ?? entry.status})`;
}

/** A path as git writes it in a diff header with core.quotePath=false: C-quoted only for `"`, `\\` and control characters. */
function quoted(name: string): string {
  const special = (c: string): boolean => c === '"' || c === '\\' || c < ' ' || c === '\x7f';
  if (![...name].some(special)) return name;
  const escapes: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\v': '\\v', '\f': '\\f', '\r': '\\r', '"': '\\"', '\\': '\\\\' };
  const body = [...name].map((c) => escapes[c] ?? (c < ' ' || c === '\x7f' ? `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}` : c)).join('');
  return `"${body}"`;
}

function headersFor(entry: RawEntry): string[] {
  const path = quoted(entry.path);
  return [`diff --git ${quoted(`a/${entry.from ?? entry.path}`)} ${quoted(`b/${entry.path}`)}`, `diff --cc ${path}`, `diff --combined ${path}`];
}

/**
 * Which section of the patch belongs to which entry of the file list, by its header: the two are not
 * one to one (a conflicted path has no section in a staged diff, and two entries but one combined
 * section in an unstaged one). A section that matches no entry is left out rather than mislabelled.
 */
function placeSections(entries: RawEntry[], sections: string[]): Map<number, string> {
  const placed = new Map<number, string>();
  let next = 0;
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const header = newline === -1 ? section : section.slice(0, newline);
    let j = next;
    while (j < entries.length && !headersFor(entries[j]!).includes(header)) j++;
    if (j === entries.length) continue;
    placed.set(j, section.replace(/^\* Unmerged path .*\n?/gm, ''));
    next = j + 1;
  }
  return placed;
}

/** Sizes of blobs by object id (`cat-file --batch-check`), for summarising binary files. */
async function blobSizes(repo: GitRepository, oids: string[], signal?: AbortSignal): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const wanted = [...new Set(oids.filter((oid) => oid && !ZERO_OID.test(oid)))];
  if (wanted.length === 0) return sizes;
  const result = await repo.run(['cat-file', '--batch-check'], { input: `${wanted.join('\n')}\n`, ...(signal ? { signal } : {}) });
  for (const line of result.stdout.split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (oid && type === 'blob' && size) sizes.set(oid, Number(size));
  }
  return sizes;
}

/**
 * A diff within a budget. Three git calls run side by side: the list of every changed file (no
 * content read, so it is fast however large the change), the list of the excluded files (lock
 * and generated files, by pathspec glob), and the patch of the rest, stopped once it is far past
 * what the budget can show. Each file's diff is cut at `perFileBytes`; files are added in git's
 * order while they fit in `totalBytes`; binary files become one line with their sizes. What was
 * left out is said at the end, by name.
 */
export async function renderDiff(repo: GitRepository, request: DiffRequest): Promise<RenderedDiff> {
  const { source, budget, signal } = request;
  const opts = signal ? { signal } : {};
  const { command, revisions } = sourceArgs(source);
  const call = (format: string[], pathspecs: string[]): string[] => [...command, ...COMMON, ...format, ...revisions, '--', ...pathspecs];
  const excludes = request.path === undefined ? budget.exclude : [];
  const included = request.path !== undefined ? [literalPathspec(request.path)] : [':/', ...excludes.map((glob) => `:(top,exclude,glob)${glob}`)];
  // Twice the per-file budget at least: a file whose diff alone passes the cap still shows its first part.
  const patchCap = Math.max(4 * budget.totalBytes, 2 * budget.perFileBytes, 256 * 1024);

  const [rawResult, excludedResult, patchResult] = await Promise.all([
    repo.run(call(['--raw', '-z', '--no-abbrev'], included), opts),
    excludes.length > 0 ? repo.run(call(['--raw', '-z', '--no-abbrev'], excludes.map((glob) => `:(top,glob)${glob}`)), opts) : undefined,
    repo.run(call(['-p', `-U${request.contextLines ?? 3}`], included), { ...opts, maxOutputBytes: patchCap }),
  ]);
  for (const result of [rawResult, excludedResult, patchResult]) {
    if (result && !result.ok) throw repo.failure(result, 'git diff');
  }

  const raw = cutOutput(rawResult, '\0');
  const excludedRaw = excludedResult ? cutOutput(excludedResult, '\0') : { text: '', cut: false };
  const entries = parseRaw(raw.text);
  const excluded = parseRaw(excludedRaw.text);
  let patch = patchResult.stdout;
  if (patchResult.truncated.stdout) patch = patch.slice(0, patch.lastIndexOf('\n[… output truncated'));
  const sections = splitPatch(patch);
  // The last section of a patch stopped at its cap is incomplete. When at least the per-file budget
  // of it was read, its first part is shown like any long file's (its line counts come from numstat);
  // otherwise it counts as not read.
  let partial: string | undefined;
  if (patchResult.truncated.stdout) {
    const last = sections.pop();
    if (last !== undefined && Buffer.byteLength(last) > budget.perFileBytes) {
      partial = last;
      sections.push(last);
    }
  }

  const sectionFor = placeSections(entries, sections);
  // Paths shown by a section or summarised as a conflict. A set, not a scan per entry: most of a
  // 2,000-file change has no section (past the patch cap), and a scan each made this quadratic.
  const accounted = new Set(entries.filter((entry, i) => entry.status === 'U' || sectionFor.has(i)).map((entry) => entry.path));
  const files: DiffFile[] = [];
  const parts: string[] = [];
  const binaries: { index: number; entry: RawEntry }[] = [];
  const partialFiles: number[] = [];
  let total = 0;
  entries.forEach((entry, i) => {
    const file: DiffFile = { path: entry.path, ...(entry.from ? { from: entry.from } : {}), status: entry.status, binary: false, shown: 'over-budget', added: 0, deleted: 0 };
    const section = sectionFor.get(i);
    if (section === undefined) {
      // A conflicted path is listed twice by an unstaged diff (U, then M) with one combined section.
      if (entry.status !== 'U' && accounted.has(entry.path)) return;
      files.push(file);
      if (entry.status === 'U') {
        file.shown = 'summary';
        parts.push(`Unmerged file ${entry.path}: it has a conflict to resolve (git_status lists the conflicts).\n`);
      } else parts.push('');
      return;
    }
    files.push(file);
    if (isBinarySection(section)) {
      file.binary = true;
      file.shown = 'summary';
      binaries.push({ index: files.length - 1, entry });
      parts.push('');
      return;
    }
    Object.assign(file, countLines(section));
    const cut = cutSection(section, budget.perFileBytes);
    if (section === partial) partialFiles.push(files.length - 1);
    const more = section === partial ? 'the rest' : countOf(cut.droppedLines, 'more line', 'more lines');
    const note = cut.droppedLines > 0 || section === partial ? `[… ${more} of the diff of ${file.path} left out: it is longer than ${formatBytes(budget.perFileBytes)}]\n` : '';
    const size = Buffer.byteLength(cut.text) + Buffer.byteLength(note);
    // One file asked for by path is shown within the per-file budget whatever the total budget.
    if (total + size > budget.totalBytes && request.path === undefined) {
      parts.push('');
      return;
    }
    total += size;
    file.shown = cut.droppedLines > 0 || section === partial ? 'cut' : 'full';
    parts.push(cut.text + note);
  });

  if (binaries.length > 0) {
    const sizes = await blobSizes(repo, binaries.flatMap(({ entry }) => [entry.oldOid, entry.newOid]), signal);
    for (const { index, entry } of binaries) {
      const file = files[index]!;
      const oldSize = sizes.get(entry.oldOid);
      let newSize = sizes.get(entry.newOid);
      // The working tree side of an unstaged diff has no object yet: its size is the file's.
      if (newSize === undefined && ZERO_OID.test(entry.newOid) && entry.status !== 'D') {
        newSize = await fs.stat(path.join(repo.top, entry.path)).then((s) => s.size, () => undefined);
      }
      const sizeText = entry.status === 'A' ? `${newSize !== undefined ? formatBytes(newSize) : 'size unknown'}` : entry.status === 'D' ? `was ${oldSize !== undefined ? formatBytes(oldSize) : 'size unknown'}` : `${oldSize !== undefined ? formatBytes(oldSize) : '?'} -> ${newSize !== undefined ? formatBytes(newSize) : '?'}`;
      parts[index] = `Binary file ${describe(file)}: ${sizeText}\n`;
    }
  }

  for (const index of partialFiles) {
    const counted = await numstat(repo, command, revisions, files[index]!.path, signal);
    if (counted) Object.assign(files[index]!, counted);
  }

  for (const entry of excluded) {
    files.push({ path: entry.path, ...(entry.from ? { from: entry.from } : {}), status: entry.status, binary: false, shown: 'excluded', added: 0, deleted: 0 });
  }

  let text = parts.join('') + leftOutNote(files, budget, request.seeMore);
  if (raw.cut || excludedRaw.cut) text += `# The list of changed files is longer than git's output cap: only the first ${countOf(files.length, 'file')} are accounted for above. Narrow the diff with path.\n`;
  return { text, files, listTruncated: raw.cut || excludedRaw.cut };
}

function leftOutNote(files: DiffFile[], budget: DiffBudget, seeMore: string | undefined): string {
  const excluded = files.filter((f) => f.shown === 'excluded');
  const over = files.filter((f) => f.shown === 'over-budget');
  if (excluded.length === 0 && over.length === 0) return '';
  const list = (items: DiffFile[]): string => {
    const named = items.slice(0, NAMED_IN_NOTE).map((f) => `#   ${describe(f)}`);
    if (items.length > NAMED_IN_NOTE) named.push(`#   … and ${items.length - NAMED_IN_NOTE} more`);
    return named.join('\n');
  };
  const lines = ['', `# Left out of this diff (${countOf(files.length, 'file')} changed; ${files.length - excluded.length - over.length} shown above):`];
  if (over.length > 0) lines.push(`# ${countOf(over.length, 'file')} past the size budget (${formatBytes(budget.totalBytes)} for the whole diff):`, list(over));
  if (excluded.length > 0) lines.push(`# ${countOf(excluded.length, 'lock or generated file')} (left out by pattern):`, list(excluded));
  if (seeMore) lines.push(`# ${seeMore}`);
  return `${lines.join('\n')}\n`;
}

/** Lines added and deleted in one file (`--numstat`), for a file whose diff was only partly read. */
async function numstat(repo: GitRepository, command: string[], revisions: string[], file: string, signal?: AbortSignal): Promise<{ added: number; deleted: number } | undefined> {
  const result = await repo.run([...command, ...COMMON, '--numstat', '-z', ...revisions, '--', literalPathspec(file)], signal ? { signal } : {});
  const m = /^(\d+)\t(\d+)\t/.exec(result.ok ? result.stdout : '');
  return m ? { added: Number(m[1]), deleted: Number(m[2]) } : undefined;
}

/** Whether anything is staged, or (`staged` false) changed in the working tree: `git diff --quiet` exits 1 when so. */
export async function hasChanges(repo: GitRepository, which: 'staged' | 'unstaged', signal?: AbortSignal): Promise<boolean> {
  const args = ['diff', ...(which === 'staged' ? ['--cached'] : []), '--quiet', ...COMMON];
  const result = await repo.run(args, { okExitCodes: [0, 1], ...(signal ? { signal } : {}) });
  if (!result.ok) throw repo.failure(result, 'git diff');
  return result.exitCode === 1;
}
