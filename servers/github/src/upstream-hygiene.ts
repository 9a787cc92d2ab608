import { sanitizeText } from './sanitize.js';

/**
 * The one place GitHub's JSON is cleaned, for every request of every tool, resource, prompt and
 * completion (github-request.ts calls it on every JSON answer, errors included): every string
 * field anyone outside could choose (branch and tag names, release names, file paths, commit
 * author names, workflow and job names, labels, logins, descriptions, titles, bodies, messages)
 * loses hidden characters (tag characters, bidirectional controls, zero-width characters),
 * hidden HTML (comments, non-rendering elements) and markdown images with their URLs, exactly as
 * sanitizeText does for prose. Handlers may still format prose (userText, userLine), but nothing
 * they forget to clean reaches the model unclean.
 *
 * Kept exact: what the model must see byte for byte because it is code or file content, as the
 * README promises (file contents, diffs and patches, diff hunks, code search fragments).
 */

/** Fields holding file content or diffs, never altered. */
const EXACT_FIELDS = new Set(['patch', 'diff_hunk', 'fragment']);

/** A contents or blob answer's `content` is the file itself (base64 or utf-8, named by `encoding`). */
function isExactContent(key: string, holder: Record<string, unknown>): boolean {
  return EXACT_FIELDS.has(key) || (key === 'content' && typeof holder.encoding === 'string');
}

/** Deeper than GitHub ever nests: what lies below is dropped (never passed on uncleaned), and a hostile answer cannot exhaust the stack. */
const MAX_DEPTH = 100;

function clean(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return sanitizeText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = clean(value[i], depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (isExactContent(key, record)) continue;
    record[key] = clean(record[key], depth + 1);
  }
  return value;
}

/** GitHub's parsed JSON, cleaned in place (and returned). */
export function sanitizeUpstreamJson<T>(data: T): T {
  return clean(data, 0) as T;
}
