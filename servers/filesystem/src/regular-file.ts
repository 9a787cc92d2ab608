import { ToolError, type PathGuard } from '@suite/shared';
import { withPathErrors } from './fs-errors.js';
import { ChunkReader, openVerifiedSync, type VerifiedFile } from './verified-open.js';

/** A regular file opened for reading (verified to lie inside the roots); close `file` when done. */
export interface OpenedFile {
  file: VerifiedFile;
  reader: ChunkReader;
  size: number;
  real: string;
}

/** Opens the file a user named for reading; a directory or anything but a regular file is refused with a message saying so. */
export async function openRegularFile(guard: PathGuard, userPath: string): Promise<OpenedFile> {
  const { real } = await guard.resolve(userPath, { mustExist: true });
  return withPathErrors(userPath, async () => {
    const file = openVerifiedSync(guard, real, userPath);
    try {
      if (file.stat.isDirectory()) throw ToolError.invalidArgument(`${userPath} is a directory, not a file. Use list_directory to see what it contains.`);
      if (!file.stat.isFile()) throw ToolError.invalidArgument(`${userPath} is not a regular file.`);
      return { file, reader: new ChunkReader(file.fd), size: file.stat.size, real };
    } catch (error) {
      file.close();
      throw error;
    }
  });
}
