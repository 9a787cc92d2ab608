import { z } from 'zod';

/**
 * GitHub's naming rules for owners and repositories. Checked before a name reaches a URL, so a
 * name can never smuggle a path (`..`, `/`) into a request; the checks are refinements, which keep
 * the published schema short.
 */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,99})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

export function isOwnerName(value: string): boolean {
  return OWNER.test(value);
}

export function isRepoName(value: string): boolean {
  return REPO.test(value) && value !== '.' && value !== '..';
}

export const ownerField = z.string().refine(isOwnerName, { message: 'not a GitHub user or organization name (letters, digits, - and _)' });
export const repoField = z.string().refine(isRepoName, { message: 'not a repository name (letters, digits, ., - and _)' });

/** `owner/repo` for messages. */
export function fullName(owner: string, repo: string): string {
  return `${owner}/${repo}`;
}

/**
 * A whole number from 1, published as `{"type":"integer"}`: the bound is checked, not published
 * (zod's .int().min(1) would publish a minimum and the largest safe integer as a maximum, bytes
 * of context in every tool for what the model already knows about issue numbers and pages).
 */
// Safe integers only: 9007199254740993 arrives as ...992, and the call would name another issue than the one asked for.
export const positiveInt = z.number().refine((n) => Number.isSafeInteger(n) && n >= 1, 'a whole number from 1 to 9007199254740991').meta({ type: 'integer' });

/** The owner/repo pair every repository tool starts with. */
export const repoParams = { owner: ownerField, repo: repoField };

const PER_PAGE = 'a whole number from 1 to 100';

/**
 * GitHub's pagination, under GitHub's names in every list tool. per_page publishes its maximum,
 * the one bound a model cannot guess; its minimum, like page's, is only checked (a model knows
 * pages start at 1, and every published byte is context in every list tool).
 */
export const pageParams = {
  page: positiveInt.optional(),
  per_page: z
    .number()
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= 100, PER_PAGE)
    .meta({ type: 'integer', maximum: 100 })
    .optional(),
};

export const issueNumberField = positiveInt;


/** A string that must not be empty (checked, not published: every byte of a schema costs context). */
export const text = z.string().refine((s) => s.trim().length > 0, 'must not be empty');

/**
 * A value that becomes one segment of a request's path (a commit sha or ref, a workflow file name):
 * `.` and `..` (also percent-encoded, which URL parsers decode) would name the segment above it,
 * so `get_commit {sha: ".."}` would ask for the repository itself. github-request.ts refuses such
 * a path for every request too; this says so before anything is built.
 */
export const pathSegment = text.refine((s) => !/^(?:\.|%2e){1,2}$/i.test(s.trim()), 'must not be . or .. (it would name another path)');

/** A list of names (labels, assignees), at most 100. */
export const nameList = z.array(z.string()).refine((a) => a.length <= 100, 'at most 100 entries');
