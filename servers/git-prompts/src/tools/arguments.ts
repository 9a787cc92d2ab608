import { z } from 'zod';

/** The arguments every tool shares, named as the official git server names them. */
export const repoPath = z
  .string()
  .max(4096)
  .optional()
  .describe('The repository: a path (absolute, or relative to the first allowed directory) or a repository name from the git:// resources. Optional when only one repository is available.');

export const contextLines = z.number().int().min(0).max(200).default(3).describe('Lines of context around each change (default 3).');

export const diffPath = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .describe('Only this file or directory (relative to the top of the repository). The lock and generated files left out by default are shown when named here.');

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
