import picomatch from 'picomatch';

/**
 * Glob matching with the meanings the official server gives its patterns (minimatch with
 * `dot: true` against the path relative to the directory searched), compiled once per call.
 */

export type PathMatcher = (relative: string) => boolean;

const NEVER: PathMatcher = () => false;

function compile(pattern: string): PathMatcher {
  const matcher = picomatch(pattern, { dot: true });
  return (relative) => matcher(relative);
}

/** Throws an Error with a readable message if a pattern cannot be compiled. */
export function globMatcher(pattern: string): PathMatcher {
  return compile(pattern);
}

function anyOf(matchers: PathMatcher[]): PathMatcher {
  if (matchers.length === 0) return NEVER;
  if (matchers.length === 1) return matchers[0] as PathMatcher;
  return (relative) => matchers.some((m) => m(relative));
}

/**
 * search_files exclusions: a pattern matches the relative path (official behaviour); a pattern
 * without a slash also matches an entry's name at any depth, so `node_modules` excludes every
 * node_modules directory, not only a top-level one (a superset of the official behaviour).
 */
export function searchExcludeMatcher(patterns: readonly string[]): (relative: string, name: string) => boolean {
  const full = anyOf(patterns.map(compile));
  const byName = anyOf(patterns.filter((p) => !p.includes('/')).map(compile));
  return (relative, name) => full(relative) || byName(name);
}

/**
 * directory_tree exclusions, as the official server applies them: a pattern containing `*` is
 * matched against the relative path; any other pattern matches the path itself, a path ending
 * in it (`**\/p`) or anything under it (`**\/p/**`).
 */
export function treeExcludeMatcher(patterns: readonly string[]): (relative: string) => boolean {
  const matchers = patterns.map((pattern) => {
    if (pattern.includes('*')) return compile(pattern);
    return anyOf([compile(pattern), compile(`**/${pattern}`), compile(`**/${pattern}/**`)]);
  });
  return anyOf(matchers);
}

/** Include/exclude filters for search_content; an empty include list includes everything. */
export function includeExcludeMatcher(include: readonly string[], exclude: readonly string[]): {
  included: (relative: string, name: string) => boolean;
  excluded: (relative: string, name: string) => boolean;
} {
  const inc = include.map((p) => ({ slash: p.includes('/'), m: compile(p) }));
  const excluded = searchExcludeMatcher(exclude);
  return {
    included: (relative, name) => inc.length === 0 || inc.some(({ slash, m }) => (slash ? m(relative) : m(name) || m(relative))),
    excluded,
  };
}
