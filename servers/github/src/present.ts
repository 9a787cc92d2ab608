import { sanitizeLine, sanitizeText } from './sanitize.js';

/**
 * How GitHub's JSON becomes what a model reads: the fields that matter, one line per list entry,
 * user-authored text sanitised and capped. Every field may be null or missing (GitHub answers
 * `null` for deleted users, empty bodies, unset milestones), and nothing here assumes otherwise.
 */

type MaybeUser = { login?: string | null } | null | undefined;

/** `@login`, or GitHub's name for a deleted account. */
export function who(user: MaybeUser): string {
  return user?.login ? `@${user.login}` : '@ghost';
}

export function loginOf(user: MaybeUser): string | undefined {
  return user?.login ?? undefined;
}

/** Cuts text at `max` characters, saying how much was left out. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in half.
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}\n[truncated: ${text.length - end} more characters]`;
}

/** Text someone else wrote (a body, a comment): sanitised, then capped. */
export function userText(text: string | null | undefined, max: number, empty = '(empty)'): string {
  const clean = sanitizeText(text).trim();
  return clean ? clip(clean, max) : empty;
}

/** A one-line field someone else wrote (a title, a label): sanitised. */
export function userLine(text: string | null | undefined): string {
  return sanitizeLine(text);
}

/** The first line of a commit message, sanitised. */
export function firstLine(text: string | null | undefined): string {
  return sanitizeLine((text ?? '').split('\n')[0]);
}

/** An ISO timestamp as `2025-01-02 15:04Z`. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/:\d\d(?:\.\d+)?Z$/, 'Z');
}

/** Label names from either form GitHub uses (strings or objects). */
export function labelNames(labels: readonly (string | { name?: string | null })[] | null | undefined): string[] {
  return (labels ?? []).map((l) => userLine(typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean);
}

/**
 * A count or a number from GitHub as text: `?` when GitHub left it out or sent something that is
 * not a finite number (null, a string, 1e400), so no answer reads `null`, `undefined` or `NaN`.
 */
export function count(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : '?';
}

/** A size in bytes from GitHub, formatted; `unknown size` when it is not a finite number. */
export function sizeOf(value: unknown, format: (bytes: number) => string): string {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? format(value) : 'unknown size';
}

/** Joins the non-empty parts with a separator. */
export function parts(...items: (string | false | null | undefined)[]): string {
  return items.filter((x): x is string => typeof x === 'string' && x.length > 0).join(' · ');
}

/** The largest page number offered: beyond what any GitHub listing reaches, short of absurd. */
const MAX_PAGE = 100_000;

/** The `page` of each link of a Link header, by relation; what does not parse is left out. */
function linkPages(link: string): Map<string, number> {
  const pages = new Map<string, number>();
  for (const part of link.slice(0, 8192).split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!match) continue;
    const rel = /\brel\s*=\s*"?([a-z]+)"?/i.exec(match[2]!)?.[1]?.toLowerCase();
    if (!rel || pages.has(rel)) continue;
    let value: string | null;
    try {
      value = new URL(match[1]!).searchParams.get('page');
    } catch {
      continue;
    }
    if (value === null || !/^[1-9]\d{0,5}$/.test(value)) continue;
    const page = Number(value);
    if (page <= MAX_PAGE) pages.set(rel, page);
  }
  return pages;
}

/**
 * What follows a page of results: how to get the next one, from GitHub's `Link` header. Empty on
 * the last page, and when the header offers nothing usable: only the page right after the current
 * one is offered (a `next` that is not a whole page number, that goes back, stays or skips is
 * ignored), and `last` is named only when it is a whole page at or after it.
 */
export function nextPage(link: string | undefined, page: number): string {
  if (!link) return '';
  const pages = linkPages(link);
  const next = pages.get('next');
  if (next === undefined || next !== page + 1) return '';
  const last = pages.get('last');
  return `\nPage ${page}${last !== undefined && last >= next ? ` of ${last}` : ''}. More: call again with page: ${next}.`;
}

/** The standard paging arguments, with GitHub's defaults. */
export function paging(args: { page?: number | undefined; per_page?: number | undefined }): { page: number; per_page: number } {
  return { page: args.page ?? 1, per_page: args.per_page ?? 30 };
}

/** A list answer: a heading, one line per item (or a note that there are none), and paging. */
export function listing(heading: string, lines: string[], footer = '', empty = 'None.'): string {
  return `${heading}\n${lines.length > 0 ? lines.join('\n') : empty}${footer}`;
}

/** The note lockdown mode leaves where it held items back. */
export function hiddenNote(hidden: number): string {
  return hidden > 0 ? `\n[${hidden} item${hidden === 1 ? '' : 's'} withheld by lockdown mode: written by users without push access]` : '';
}

