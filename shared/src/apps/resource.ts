import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolError } from '../core/errors.js';
import type { ResourceDefinition } from '../server/resources.js';
import { APP_CSP, APP_MIME_TYPE } from './meta.js';

/** Where the package build writes each app's single HTML file, under the package's root. */
export const APPS_DIR = 'dist/apps';

export interface AppResourceOptions {
  /** `ui://<server>/<app>.html` */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  /** `import.meta.url` of a module of the package: its root is the nearest folder with a package.json. */
  from: string;
  /** The built file's name under dist/apps (what `buildApp` wrote). */
  file: string;
}

/** The package root of a module: the nearest folder up from it with a package.json (src/ and the bundled dist/ alike). */
export function packageRoot(moduleUrl: string): string {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    dir = parent;
  }
}

/**
 * The UI resource of an app: its built HTML with the MCP Apps MIME type and `_meta.ui.csp` asking
 * for no origin (in the listing, as the default hosts review, and on the content, which wins).
 * The file is read once per process; a missing build is an error that says how to make it.
 */
export function appResource(options: AppResourceOptions): ResourceDefinition {
  const meta = { ui: { csp: APP_CSP, prefersBorder: true } };
  let html: Promise<string> | undefined;
  // Beside the bundled bin (dist/index.js, or an MCP Bundle's server/index.js) in apps/, else the
  // package's dist/apps (the sources, run by tests).
  const besideModule = path.join(path.dirname(fileURLToPath(options.from)), 'apps', options.file);
  const file = existsSync(besideModule) ? besideModule : path.join(packageRoot(options.from), APPS_DIR, options.file);
  return {
    uri: options.uri,
    name: options.name,
    ...(options.title ? { title: options.title } : {}),
    ...(options.description ? { description: options.description } : {}),
    mimeType: APP_MIME_TYPE,
    _meta: meta,
    read: async () => {
      html ??= readFile(file, 'utf8').catch((error: unknown) => {
        html = undefined;
        throw (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? ToolError.unavailable(`The app ${options.uri} is not built: run the package's build (npx -y pnpm@10 build).`)
          : error;
      });
      return { uri: options.uri, mimeType: APP_MIME_TYPE, text: await html, _meta: meta };
    },
  };
}
