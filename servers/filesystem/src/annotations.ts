import type { ToolAnnotations } from '@suite/shared';

/** Every tool that only reads: it changes nothing, gives the same answer for the same files, and stays on this machine. */
export const READ_ONLY: Omit<ToolAnnotations, 'title'> = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
