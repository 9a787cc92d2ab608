import { ToolError } from '@suite/shared';

/**
 * Turns the errno failures a file operation can expect into ToolErrors whose messages name only
 * the path the user gave; anything else is rethrown as-is (and reported as unexpected).
 */
export function asToolError(error: unknown, userPath: string, action: string): unknown {
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return ToolError.notFound(`Cannot ${action} ${userPath}: it (or its parent directory) does not exist.`);
    case 'EEXIST':
    case 'ENOTEMPTY':
      return ToolError.conflict(`Cannot ${action} ${userPath}: something already exists there.`);
    case 'EISDIR':
      return ToolError.conflict(`Cannot ${action} ${userPath}: it is a directory.`);
    case 'ENOTDIR':
      return ToolError.conflict(`Cannot ${action} ${userPath}: a component of the path is not a directory.`);
    case 'EACCES':
    case 'EPERM':
      return ToolError.accessDenied(`Cannot ${action} ${userPath}: permission denied by the operating system.`);
    case 'ELOOP':
      return ToolError.accessDenied(`Cannot ${action} ${userPath}: too many levels of symbolic links.`);
    case 'ENAMETOOLONG':
      return ToolError.invalidArgument(`Cannot ${action} ${userPath}: the name is too long for the filesystem.`);
    case 'ENOSPC':
    case 'EDQUOT':
      return ToolError.unavailable(`Cannot ${action} ${userPath}: no space left on the device.`);
    case 'EROFS':
      return ToolError.unavailable(`Cannot ${action} ${userPath}: the filesystem is read-only.`);
    case 'EBUSY':
      return ToolError.conflict(`Cannot ${action} ${userPath}: it is busy (in use or a mount point).`);
    case 'EINVAL':
      return ToolError.invalidArgument(`Cannot ${action} ${userPath}: the operation is not valid for this path.`);
    default:
      return error;
  }
}

/** Runs a file operation and converts expected errno failures (see asToolError). */
export async function withFsErrors<T>(userPath: string, action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asToolError(error, userPath, action);
  }
}
