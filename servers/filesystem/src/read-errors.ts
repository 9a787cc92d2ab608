import { ToolError } from '@suite/shared';

/**
 * Turns an operating-system error about a path the user gave (on the read side) into a ToolError
 * whose message names only that path. Anything that is not an expected errno failure passes through
 * and is reported as unexpected.
 */
export function readFailure(error: unknown, userPath: string): unknown {
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return ToolError.notFound(`Not found: ${userPath}`);
    case 'ENOTDIR':
      return ToolError.invalidArgument(`Not a directory: ${userPath}`);
    case 'EISDIR':
      return ToolError.invalidArgument(`${userPath} is a directory, not a file. Use list_directory to see what it contains.`);
    case 'EACCES':
    case 'EPERM':
      return ToolError.accessDenied(`Permission denied: ${userPath}`);
    case 'ELOOP':
      return ToolError.accessDenied(`Access denied: ${JSON.stringify(userPath)} is outside the allowed directories.`);
    case 'EMFILE':
    case 'ENFILE':
      return ToolError.unavailable('The server has too many open files right now; try again in a moment.');
    default:
      return error;
  }
}

/** Runs `fn`, rethrowing errno failures as ToolErrors about `userPath`. */
export async function withPathErrors<T>(userPath: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw readFailure(error, userPath);
  }
}
