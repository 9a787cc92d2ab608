/** Everything the filesystem server is configured with, shared by all sessions of one process. */
export interface FilesystemConfig {
  /** Real paths of the directories given on the command line (may be empty: client roots then decide). */
  directories: string[];
  /** The same directories as typed, so /tmp/x keeps working where /tmp is a symlink. */
  aliases: string[];
  /** With --read-only, write tools are not registered at all. */
  readOnly: boolean;
  limits: FilesystemLimits;
}

export interface FilesystemLimits {
  /** Largest text a single read returns before it is cut with a "truncated" marker. */
  maxReadBytes: number;
  /** Largest file read_media_file will encode. */
  maxMediaBytes: number;
  /** Most entries a listing or tree returns before a "truncated, N more" marker. */
  maxEntries: number;
  /** Most matches a search returns by default. */
  maxResults: number;
  /** Longest a read or search call may run before it stops with a timeout (checked between chunks and files). */
  readTimeoutMs: number;
}

export const DEFAULT_LIMITS: FilesystemLimits = {
  maxReadBytes: 256 * 1024,
  maxMediaBytes: 10 * 1024 * 1024,
  maxEntries: 2000,
  maxResults: 1000,
  readTimeoutMs: 20_000,
};
