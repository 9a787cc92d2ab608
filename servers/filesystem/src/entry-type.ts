import { z } from 'zod';

/** The kinds of filesystem entry, as listings, searches, moves and deletes name them in their structured output. */
export const entryType = z.enum(['file', 'directory', 'symlink', 'other']);
