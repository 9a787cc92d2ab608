import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition, type ContentBlock } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { withPathErrors } from '../fs-errors.js';
import { mimeTypeFor } from '../mime.js';
import { readBudget } from '../read-budget.js';
import { openRegularFile } from '../regular-file.js';
import { formatSize } from '../sizes.js';

/** read_media_file reads in pieces this big, so no single read blocks for long. */
const MEDIA_CHUNK_BYTES = 1024 * 1024;

const readMediaInput = z.object({ path: z.string().describe('Path of the image, audio or other binary file.') });
const readMediaOutput = z.object({
  path: z.string(),
  mimeType: z.string(),
  size: z.number().describe('Size in bytes before base64 encoding.'),
  kind: z.enum(['image', 'audio', 'resource']).describe('Which content block carries the data.'),
});

export function readMediaFileTool(config: FilesystemConfig): AnyToolDefinition {
  const { maxMediaBytes, readTimeoutMs } = config.limits;
  return defineTool({
    name: 'read_media_file',
    description:
      'Read an image, audio or other binary file and return it base64-encoded with its MIME type: images as image ' +
      `content, audio as audio content, anything else as an embedded resource. Files over ${formatSize(maxMediaBytes)} are refused. ` +
      'Only works within allowed directories.',
    input: readMediaInput,
    output: readMediaOutput,
    annotations: { title: 'Read Media File', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const budget = readBudget(ctx, readTimeoutMs, (limit) => `Reading ${args.path} was stopped after ${limit}.`);
      const { file, reader, size, real } = await openRegularFile(guard, args.path);
      try {
        if (size > maxMediaBytes) {
          throw ToolError.invalidArgument(`${args.path} is ${formatSize(size)}, over the ${formatSize(maxMediaBytes)} limit for read_media_file.`);
        }
        const data = await withPathErrors(args.path, async () => {
          const buffer = Buffer.allocUnsafe(size);
          let filled = 0;
          while (filled < size) {
            budget.check();
            const bytesRead = await reader.read(buffer, filled, Math.min(MEDIA_CHUNK_BYTES, size - filled), filled);
            if (bytesRead === 0) break;
            filled += bytesRead;
          }
          return buffer.subarray(0, filled).toString('base64');
        });
        const mimeType = mimeTypeFor(real);
        const kind: 'image' | 'audio' | 'resource' = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'resource';
        const block: ContentBlock =
          kind === 'image'
            ? { type: 'image', data, mimeType }
            : kind === 'audio'
              ? { type: 'audio', data, mimeType }
              : { type: 'resource', resource: { uri: pathToFileURL(real).href, mimeType, blob: data } };
        return { content: [block], structured: { path: args.path, mimeType, size, kind } };
      } finally {
        file.close();
      }
    },
  });
}
