import { ToolError } from '@suite/shared';

/**
 * Turns the errno failures a file operation can expect into ToolErrors whose messages name only
 * the path the user gave; anything else is returned unchanged (and reported as unexpected).
 *
 * With an `action` ("write", "move to"), messages say what could not be done; without one (reads,
 * listings, stat), they are the short forms a reader expects: "Not found: x".
 */
export function asToolError(error: unknown, userPath: string, action?: string): unknown {
  if (error instanceof ToolError) return error;
  const cannot = (why: string): string => `Cannot ${action ?? 'access'} ${userPath}: ${why}`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return ToolError.notFound(action ? cannot('it (or its parent directory) does not exist.') : `Not found: ${userPath}`);
    case 'ENOTDIR':
      return ToolError.invalidArgument(action ? cannot('a component of the path is not a directory.') : `Not a directory: ${userPath}`);
    case 'EISDIR':
      return ToolError.invalidArgument(
        action ? cannot('it is a directory.') : `${userPath} is a directory, not a file. Use list_directory to see what it contains.`,
      );
    case 'EACCES':
    case 'EPERM':
      return ToolError.accessDenied(action ? cannot('permission denied by the operating system.') : `Permission denied: ${userPath}`);
    case 'ELOOP':
      // O_NOFOLLOW met a symlink where the checked path had none: treat it as an escape attempt.
      return ToolError.accessDenied(`Access denied: ${JSON.stringify(userPath)} is outside the allowed directories.`);
    case 'EEXIST':
    case 'ENOTEMPTY':
      return ToolError.conflict(cannot('something already exists there.'));
    case 'ENAMETOOLONG':
      return ToolError.invalidArgument(cannot('the name is too long for the filesystem.'));
    case 'ENOSPC':
    case 'EDQUOT':
      return ToolError.unavailable(cannot('no space left on the device.'));
    case 'EROFS':
      return ToolError.unavailable(cannot('the filesystem is read-only.'));
    case 'EBUSY':
      return ToolError.conflict(cannot('it is busy (in use or a mount point).'));
    case 'EINVAL':
      return ToolError.invalidArgument(cannot('the operation is not valid for this path.'));
    case 'EMFILE':
    case 'ENFILE':
      return ToolError.unavailable('The server has too many open files right now; try again in a moment.');
    default:
      return error;
  }
}

/** Runs a file operation named by `action`, converting expected errno failures (see asToolError). */
export async function withFsErrors<T>(userPath: string, action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asToolError(error, userPath, action);
  }
}

/** Runs a read, listing or stat of `userPath`, converting expected errno failures to the short forms. */
export async function withPathErrors<T>(userPath: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asToolError(error, userPath);
  }
}
