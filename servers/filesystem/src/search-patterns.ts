import { ToolError } from '@suite/shared';
import { globMatcher, type PathMatcher } from './globs.js';

/** Longest glob or regular expression a search accepts. */
export const MAX_PATTERN_LENGTH = 1000;

/** A glob the user gave, compiled; one that cannot be is an invalid argument naming the field (`what`). */
export function compileGlob(pattern: string, what: string): PathMatcher {
  try {
    return globMatcher(pattern);
  } catch {
    throw ToolError.invalidArgument(`Invalid glob in ${what}: ${JSON.stringify(pattern)}.`);
  }
}
