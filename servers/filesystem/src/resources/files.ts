import { constants } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ToolError, decodeCursor, encodeCursor, isInside, isSuiteTempName, type RequestContext, type ResourceListing, type SuiteServer } from '@suite/shared';
import type { FilesystemConfig } from '../config.js';
import { OCTET_STREAM, isProbablyText, isTextMimeType, mimeTypeFor } from '@suite/shared';
import { walk } from '../walk.js';

/** resources/list stops after this many files in total; the template still reads any other file. */
export const LIST_MAX_FILES = 10_000;
/** ... and looks this many levels deep (1 = the files directly in a root). */
export const LIST_MAX_DEPTH = 6;
/** Files per resources/list page. */
export const LIST_PAGE_SIZE = 200;
/** A listing is walked again when a client pages through it more slowly than this. */
const SNAPSHOT_TTL_MS = 30_000;
/** Completion offers at most this many entries (the protocol shows 100 and says there are more). */
const COMPLETION_LIMIT = 1000;

const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

const listCursor = z.object({ offset: z.number().int().min(0), key: z.string() });

interface ListedFile {
  real: string;
  name: string;
}

interface ListingSnapshot {
  key: string;
  files: ListedFile[];
  takenAt: number;
}

/**
 * A filter for paths inside a directory the listing never enters, and for the suite's temporary files. Only the part below the root
 * counts, so a root that itself lives under some `node_modules` is still watched.
 */
function skippedPathFilter(dirs: readonly string[]): (p: string) => boolean {
  return (p) => {
    // Our own temporary files come and go with every write; they are not in the listing, so not a change to it.
    if (isSuiteTempName(path.basename(p))) return true;
    const root = dirs.find((dir) => isInside(p, dir));
    if (!root) return false;
    return path.relative(root, p).split(path.sep).some((part) => SKIPPED_DIRECTORIES.has(part));
  };
}

/**
 * Files under the roots as `file://` resources: a paginated listing, a template that reads any
 * file inside the roots, completion of paths, and subscriptions (a change to a subscribed file
 * sends `notifications/resources/updated`; files appearing or disappearing under a root send
 * `notifications/resources/list_changed` once the session has listed resources).
 */
export function registerFileResources(server: SuiteServer, config: FilesystemConfig): void {
  let snapshot: ListingSnapshot | undefined;
  let watchedKey: string | undefined;

  const watchListing = async (dirs: readonly string[], ctx: RequestContext): Promise<string> => {
    const key = `filesystem-files:${dirs.join('\u0000')}`;
    if (watchedKey === key) return key;
    // The roots changed (client roots): stop watching the old set for this session.
    if (watchedKey) await ctx.changes.unwatchListing(watchedKey);
    watchedKey = key;
    await ctx.changes.watchListing(key, dirs, { depth: LIST_MAX_DEPTH - 1, ignored: skippedPathFilter(dirs) });
    return key;
  };
  // The hub releases the session's listing watch itself when the session ends.
  server.onClose(() => {
    watchedKey = undefined;
    snapshot = undefined;
  });

  server.resourceTemplate({
    uriTemplate: 'file://{+path}',
    name: 'file',
    title: 'File in an allowed directory',
    description:
      'Any file inside the allowed directories, by file:// URI. Text files are returned as text with their MIME type, other files as base64 blobs. ' +
      `Files larger than ${config.limits.maxMediaBytes} bytes are refused (use read_text_file with offset/limit or head/tail). ` +
      `resources/list offers the first ${LIST_MAX_FILES} files (breadth-first, ${LIST_MAX_DEPTH} levels deep, skipping .git and node_modules). ` +
      'Subscribe to a file to hear when it changes.',
    list: async (cursor, ctx) => {
      const roots = await ctx.roots();
      if (roots.directories.length === 0) return { resources: [] };
      const dirs = [...(await ctx.paths()).directories];
      const key = await watchListing(dirs, ctx);
      let offset = 0;
      if (cursor !== undefined) {
        const state = decodeCursor('file-resources', cursor, listCursor);
        // A cursor from another set of roots cannot continue this listing: start over.
        if (state.key === key) offset = state.offset;
      }
      if (!snapshot || snapshot.key !== key || offset === 0 || Date.now() - snapshot.takenAt > SNAPSHOT_TTL_MS) {
        snapshot = { key, files: await listFiles(dirs, ctx), takenAt: Date.now() };
      }
      const page = snapshot.files.slice(offset, offset + LIST_PAGE_SIZE);
      const resources = await Promise.all(page.map(describeFile));
      const next = offset + page.length;
      return next < snapshot.files.length ? { resources, nextCursor: encodeCursor('file-resources', { offset: next, key }) } : { resources };
    },
    read: async (uri, _variables, ctx) => {
      const userPath = pathOfUri(uri);
      const guard = await ctx.paths();
      const { real } = await guard.resolve(userPath, { mustExist: true });
      // O_NONBLOCK: opening a FIFO must not hang the request; it is refused below as not a regular file.
      const handle = await guard.open(real, constants.O_RDONLY | constants.O_NONBLOCK, undefined, userPath);
      let bytes: Buffer;
      try {
        const stat = await handle.stat();
        if (stat.isDirectory()) throw ToolError.invalidArgument(`${uri} is a directory. Read a file, or list the directory with list_directory.`);
        if (!stat.isFile()) throw ToolError.invalidArgument(`${uri} is not a regular file.`);
        if (stat.size > config.limits.maxMediaBytes) {
          throw ToolError.invalidArgument(
            `${uri} is ${stat.size} bytes, more than the ${config.limits.maxMediaBytes} bytes a resource read returns. Use read_text_file with offset/limit or head/tail instead.`,
          );
        }
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
      const mimeType = mimeTypeFor(real);
      const text = (isTextMimeType(mimeType) || mimeType === OCTET_STREAM) && isProbablyText(bytes) ? decodeUtf8(bytes) : undefined;
      if (text !== undefined) return { uri, mimeType: mimeType === OCTET_STREAM ? 'text/plain' : mimeType, text };
      return { uri, mimeType, blob: bytes.toString('base64') };
    },
    complete: {
      path: async (value, _context, ctx) => completePath(value, ctx),
    },
    subscribe: async (uri, _variables, ctx) => {
      const guard = await ctx.paths();
      const { real } = await guard.resolve(pathOfUri(uri), { mustExist: true });
      return { path: real };
    },
  });
}

function pathOfUri(uri: string): string {
  try {
    return fileURLToPath(uri);
  } catch {
    throw ToolError.invalidArgument(`Invalid file URI: ${uri}. Use file:// followed by an absolute path, e.g. file:///home/me/notes.txt.`);
  }
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Breadth-first over every root, regular files only, bounded in count and depth. */
async function listFiles(dirs: readonly string[], ctx: RequestContext): Promise<ListedFile[]> {
  const files: ListedFile[] = [];
  const named = dirs.length > 1;
  for (const dir of dirs) {
    const prefix = named ? `${path.basename(dir)}/` : '';
    try {
      for await (const entry of walk(dir, {
        maxDepth: LIST_MAX_DEPTH,
        signal: ctx.signal,
        exclude: (_relative, isDirectory, name) => isDirectory && SKIPPED_DIRECTORIES.has(name),
      })) {
        if (entry.type !== 'file') continue;
        files.push({ real: entry.path, name: prefix + entry.relative });
        if (files.length >= LIST_MAX_FILES) return files;
      }
    } catch (error) {
      // A root that vanished or cannot be read lists nothing; the others still do.
      ctx.log.private('warning', `listing a root failed: ${String(error)}`);
    }
  }
  return files;
}

async function describeFile(file: ListedFile): Promise<ResourceListing> {
  const mimeType = mimeTypeFor(file.real);
  const size = await lstat(file.real).then(
    (s) => s.size,
    () => undefined,
  );
  return {
    uri: pathToFileURL(file.real).href,
    name: file.name,
    ...(mimeType !== OCTET_STREAM ? { mimeType } : {}),
    ...(size !== undefined ? { size } : {}),
  };
}

/**
 * Completes the `path` of `file://{+path}`: entries of the directory being typed in whose names
 * start with the last, partial component, or the roots themselves while the value is a prefix of one.
 */
async function completePath(value: string, ctx: RequestContext): Promise<string[]> {
  const roots = await ctx.roots();
  if (roots.directories.length === 0) return [];
  const guard = await ctx.paths();
  const typed = value.length === 0 ? '/' : value;
  const directoryPart = typed.endsWith('/') ? typed : path.posix.dirname(typed);
  const partial = typed.endsWith('/') ? '' : path.posix.basename(typed);
  const resolved = await guard.resolve(directoryPart, { mustExist: true }).catch(() => undefined);
  if (!resolved) {
    // Still typing the way to a root: offer the roots that continue what was typed.
    return guard.directories.filter((root) => root.startsWith(typed)).map((root) => `${root}/`).sort();
  }
  const dirents = await readdir(resolved.real, { withFileTypes: true }).catch(() => []);
  const base = directoryPart.endsWith('/') ? directoryPart : `${directoryPart}/`;
  return dirents
    .filter((d) => d.name.startsWith(partial) && !SKIPPED_DIRECTORIES.has(d.name) && !isSuiteTempName(d.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, COMPLETION_LIMIT)
    .map((d) => `${base}${d.name}${d.isDirectory() ? '/' : ''}`);
}
