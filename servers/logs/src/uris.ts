import { ToolError } from '@suite/shared';
import { FILE_URI_PREFIX } from './config.js';
import { LEVELS, type Level } from './levels.js';

/** The `logs://` URIs: built and taken apart in one place. */

/** `logs://file/var/log/app.log` for `/var/log/app.log`: each segment percent-encoded. */
export function fileUri(realPath: string, query: Record<string, string | undefined> = {}): string {
  const encoded = realPath.split('/').filter(Boolean).map(encodeURIComponent).join('/');
  const params = Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined);
  const search = params.length > 0 ? `?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '';
  return `${FILE_URI_PREFIX}${encoded}${search}`;
}

export interface FileView {
  path: string;
  level?: Level;
  since?: string;
  grep?: string;
}

function decode(text: string, uri: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw ToolError.invalidArgument(`Invalid URI ${uri}: it is not valid percent-encoding.`);
  }
}

/**
 * Reads the raw URI rather than template variables: a `?` is never part of an encoded path, so
 * the split is exact, and the query parameters may come in any order or be left out.
 */
export function parseFileUri(uri: string): FileView {
  if (!uri.startsWith(FILE_URI_PREFIX)) throw ToolError.invalidArgument(`Not a log file URI: ${uri}`);
  const rest = uri.slice(FILE_URI_PREFIX.length);
  const q = rest.indexOf('?');
  const pathPart = q === -1 ? rest : rest.slice(0, q);
  if (pathPart.length === 0) throw ToolError.invalidArgument(`Invalid URI ${uri}: it names no file. Use logs://file/ followed by the log's absolute path without its leading slash.`);
  const view: FileView = { path: `/${decode(pathPart, uri).replace(/^\/+/, '')}` };
  if (q === -1) return view;
  const params = new URLSearchParams(rest.slice(q + 1));
  for (const [key, value] of params) {
    if (key === 'level') {
      if (!(LEVELS as readonly string[]).includes(value)) throw ToolError.invalidArgument(`Invalid level ${JSON.stringify(value)} in ${uri}: use one of ${LEVELS.join(', ')}.`);
      view.level = value as Level;
    } else if (key === 'since') view.since = value;
    else if (key === 'grep') view.grep = value;
    else throw ToolError.invalidArgument(`Unknown parameter ${JSON.stringify(key)} in ${uri}: the filters are level, since and grep.`);
  }
  return view;
}
