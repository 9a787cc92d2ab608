import { ToolError, type TemplateVariables } from '@suite/shared';
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

/** The filters a `logs://file/...` URI may carry; anything else in its query is a mistake to point out. */
const FILTERS = ['level', 'since', 'grep'] as const;

/**
 * The view a `logs://file/...` URI names, from the template variables `@suite/shared` matched and
 * percent-decoded. Only the parameter names (and whether a path is there at all) are read from the
 * URI itself: shared ignores unknown parameters as a web server would, where a misspelt filter
 * (`?levle=error`) here would silently show everything, so it is refused instead.
 */
export function fileView(uri: string, variables: TemplateVariables): FileView {
  const pathText = variables.path ?? '';
  const q = uri.indexOf('?');
  // An empty path makes the template without a query take the query for the path: look at the URI.
  const rawPath = uri.slice(FILE_URI_PREFIX.length, q === -1 ? undefined : q);
  if (!uri.startsWith(FILE_URI_PREFIX) || rawPath.replace(/^\/+/, '') === '' || pathText.replace(/^\/+/, '') === '') {
    throw ToolError.invalidArgument(`Invalid URI ${uri}: it names no file. Use logs://file/ followed by the log's absolute path without its leading slash.`);
  }
  if (q !== -1) {
    for (const pair of uri.slice(q + 1).split('&')) {
      const name = pair.split('=', 1)[0]!;
      if (name !== '' && !(FILTERS as readonly string[]).includes(name)) {
        throw ToolError.invalidArgument(`Unknown parameter ${JSON.stringify(name)} in ${uri}: the filters are ${FILTERS.join(', ')}.`);
      }
    }
  }
  const view: FileView = { path: `/${pathText.replace(/^\/+/, '')}` };
  const { level, since, grep } = variables;
  if (level !== undefined) {
    if (!(LEVELS as readonly string[]).includes(level)) throw ToolError.invalidArgument(`Invalid level ${JSON.stringify(level)} in ${uri}: use one of ${LEVELS.join(', ')}.`);
    view.level = level as Level;
  }
  if (since !== undefined && since !== '') view.since = since;
  if (grep !== undefined && grep !== '') view.grep = grep;
  return view;
}
