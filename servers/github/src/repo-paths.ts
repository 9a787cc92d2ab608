import { z } from 'zod';

/**
 * Paths inside a repository and branch names, checked and then percent-encoded one segment at a
 * time, so `#`, `?`, `%`, spaces and non-ASCII names reach the right file and `..` reaches nothing.
 */

function badPath(path: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'contains a control character';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'has an empty segment (a leading, trailing or double slash)';
  if (segments.some((s) => s === '.' || s === '..')) return 'contains . or .. segments';
  if (path.length > 4096) return 'is longer than 4096 characters';
  return undefined;
}

/** A path to a file in a repository (no leading slash). */
export const filePathField = z.string().superRefine((path, ctx) => {
  const problem = path === '' ? 'is empty' : badPath(path);
  if (problem) ctx.addIssue({ code: 'custom', message: `the path ${problem}` });
});

/** A path to a file or directory; empty for the repository root. */
export const anyPathField = z.string().superRefine((path, ctx) => {
  const problem = path === '' ? undefined : badPath(path);
  if (problem) ctx.addIssue({ code: 'custom', message: `the path ${problem}` });
});

/** `a b/c#d` -> `a%20b/c%23d`. */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

/** The contents API URL of a path (the root for ''), as an Octokit route. */
export function contentsRoute(method: 'GET' | 'PUT' | 'DELETE', path: string): string {
  return `${method} /repos/{owner}/{repo}/contents${path ? `/${encodePath(path)}` : ''}`;
}

/** git check-ref-format's rules for a branch name, the ones a model could get wrong. */
function badBranch(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name.startsWith('-')) return 'starts with -';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'has an empty path component';
  if (name.endsWith('.') || name.endsWith('.lock') || name.includes('..') || name.includes('@{') || name === '@') return 'uses a sequence git does not allow (.., @{, a trailing . or .lock)';
  // eslint-disable-next-line no-control-regex -- git refuses control characters in ref names
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(name)) return 'contains a space, a control character or one of ~ ^ : ? * [ \\';
  if (name.split('/').some((part) => part.startsWith('.'))) return 'has a component starting with .';
  if (name.length > 255) return 'is longer than 255 characters';
  return undefined;
}

export const branchField = z.string().superRefine((name, ctx) => {
  const problem = badBranch(name);
  if (problem) ctx.addIssue({ code: 'custom', message: `not a valid branch name: it ${problem}` });
});

/** The git refs API URL of a branch (`heads/NAME`), for routes ending in ref/{ref} or refs/{ref}. */
export function branchRef(branch: string): string {
  return encodePath(`heads/${branch}`);
}
