import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ChangeHub, SuiteServer } from '@suite/shared';
import { connectInProcess, makeTempDir, type ClientOptions, type TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS, type FilesystemConfig, type FilesystemLimits } from '../src/config.js';
import { directoryTreeTool } from '../src/tools/directory-tree.js';
import { getFileInfoTool } from '../src/tools/get-file-info.js';
import { listAllowedDirectoriesTool } from '../src/tools/list-allowed-directories.js';
import { listDirectoryTool } from '../src/tools/list-directory.js';
import { listDirectoryWithSizesTool } from '../src/tools/list-directory-with-sizes.js';
import { readMediaFileTool } from '../src/tools/read-media-file.js';
import { readMultipleFilesTool } from '../src/tools/read-multiple-files.js';
import { readTextFileTools } from '../src/tools/read-text-file.js';
import { searchContentTool } from '../src/tools/search-content.js';
import { searchFilesTool } from '../src/tools/search-files.js';

/**
 * A server with only the read-side tools, so these tests exercise exactly the read-side modules
 * (the full server, with write tools and resources, is covered by the compat and stdio tests).
 *
 * Layout: `base/root` is the allowed directory; `base/outside` and `base/root-evil` are not.
 */
export interface ReadSideHarness {
  base: string;
  /** The allowed directory. */
  dir: string;
  outside: string;
  session: TestSession;
  close(): Promise<void>;
}

export async function startReadSide(options: { limits?: Partial<FilesystemLimits>; client?: ClientOptions } = {}): Promise<ReadSideHarness> {
  const temp = await makeTempDir('fs-read-');
  const dir = path.join(temp.dir, 'root');
  const outside = path.join(temp.dir, 'outside');
  await mkdir(dir);
  await mkdir(outside);
  const changes = new ChangeHub();
  const config: FilesystemConfig = {
    directories: [dir],
    aliases: [dir],
    readOnly: true,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  };
  const server = new SuiteServer({ name: 'read-side-test', version: '0.0.0', roots: { directories: [dir], aliases: [dir] }, changes });
  server.tools([
    ...readTextFileTools(config),
    readMediaFileTool(config),
    readMultipleFilesTool(config),
    listDirectoryTool(config),
    listDirectoryWithSizesTool(config),
    directoryTreeTool(config),
    searchFilesTool(config),
    searchContentTool(config),
    getFileInfoTool(),
    listAllowedDirectoriesTool(),
  ]);
  const session = await connectInProcess(server, options.client ?? {});
  return {
    base: temp.dir,
    dir,
    outside,
    session,
    close: async () => {
      await session.close();
      await changes.close();
      await temp.cleanup();
    },
  };
}
