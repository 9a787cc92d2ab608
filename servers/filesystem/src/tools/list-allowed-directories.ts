import { z } from 'zod';
import { defineTool, noRootsMessage, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';

const allowedInput = z.object({});
const allowedOutput = z.object({
  directories: z.array(z.string()),
  source: z.enum(['command-line', 'client', 'command-line narrowed by client']),
});

export function listAllowedDirectoriesTool(): AnyToolDefinition {
  return defineTool({
    name: 'list_allowed_directories',
    description:
      'Returns the list of directories that this server is allowed to access. Subdirectories within these allowed ' +
      'directories are also accessible. Use this to understand which directories and their nested paths are available ' +
      'before trying to access files.',
    input: allowedInput,
    output: allowedOutput,
    annotations: { title: 'List Allowed Directories', ...READ_ONLY },
    handler: async (_args, ctx) => {
      const snapshot = await ctx.roots();
      const text =
        snapshot.directories.length > 0 ? `Allowed directories:\n${snapshot.directories.join('\n')}` : `Allowed directories: none.\n${noRootsMessage(snapshot.source)}`;
      return { text, structured: { directories: snapshot.directories, source: snapshot.source } };
    },
  });
}
