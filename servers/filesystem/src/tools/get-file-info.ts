import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import { withPathErrors } from '../fs-errors.js';
import { mimeTypeFor } from '../mime.js';
import { formatSize } from '../sizes.js';

const fileInfoInput = z.object({ path: z.string().describe('Path of the file or directory.') });

const fileInfoOutput = z.object({
  path: z.string(),
  type: z.enum(['file', 'directory', 'other']),
  size: z.number().describe('Bytes (for a directory: the size of the directory entry itself).'),
  created: z.string().describe('ISO 8601 time of creation (birth time; may equal modified where the filesystem does not record it).'),
  modified: z.string(),
  accessed: z.string(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  isSymbolicLink: z.boolean().describe('The path given is a symbolic link (its target, inside the allowed directories, is what is described).'),
  permissions: z.string().describe('Octal permission bits, as "644".'),
  hardLinks: z.number().describe('Number of hard links to the file (more than 1: the same content is reachable under other names).'),
  mimeType: z.string().optional(),
});

export function getFileInfoTool(): AnyToolDefinition {
  return defineTool({
    name: 'get_file_info',
    description:
      'Retrieve metadata about a file or directory without reading it: size, creation, modification and access times, ' +
      'type, permissions, hard-link count and (for files) the MIME type guessed from the name. Only works within allowed directories.',
    input: fileInfoInput,
    output: fileInfoOutput,
    annotations: { title: 'Get File Info', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const { real } = await guard.resolve(args.path, { mustExist: true });
      const { stat, isLink } = await withPathErrors(args.path, async () => {
        // The guard resolved every link inside the roots; lstat of the spelling given tells whether it was a link.
        const link = await fs.lstat(guard.normalize(args.path)).catch(() => undefined);
        return { stat: await fs.stat(real), isLink: link?.isSymbolicLink() === true };
      });
      const type = stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : 'other';
      const info: z.output<typeof fileInfoOutput> = {
        path: args.path,
        type,
        size: stat.size,
        created: stat.birthtime.toISOString(),
        modified: stat.mtime.toISOString(),
        accessed: stat.atime.toISOString(),
        isDirectory: stat.isDirectory(),
        isFile: stat.isFile(),
        isSymbolicLink: isLink,
        permissions: (stat.mode & 0o777).toString(8).padStart(3, '0'),
        hardLinks: stat.nlink,
      };
      if (stat.isFile()) info.mimeType = mimeTypeFor(real);
      // Same keys and order as the official server first, then ours.
      const text = [
        `size: ${info.size}${info.isFile ? ` (${formatSize(info.size)})` : ''}`,
        `created: ${info.created}`,
        `modified: ${info.modified}`,
        `accessed: ${info.accessed}`,
        `isDirectory: ${info.isDirectory}`,
        `isFile: ${info.isFile}`,
        `permissions: ${info.permissions}`,
        `isSymbolicLink: ${info.isSymbolicLink}`,
        `hardLinks: ${info.hardLinks}`,
        ...(info.mimeType ? [`mimeType: ${info.mimeType}`] : []),
      ].join('\n');
      return { text, structured: info };
    },
  });
}
