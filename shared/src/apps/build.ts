import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The package build's step that turns an app into one self-contained HTML file: its script bundled
 * and minified by esbuild (a build-time tool, loaded only here), its styles inlined, and a
 * Content-Security-Policy that admits exactly that script and that style by their SHA-256 and
 * nothing else: no network (`connect-src` falls back to `'none'`), no remote or inline-handler
 * script, no remote asset. Markup a hostile log line smuggled in could therefore run nothing even
 * if an app wrote it as HTML (the apps write text only, through the app kit).
 */

/** The budgets an app's file must meet (issue 22): the build fails past them. */
export const APP_SIZE_LIMIT = { bytes: 150 * 1024, gzipBytes: 50 * 1024 } as const;

export interface BuildAppOptions {
  /** The app's TypeScript entry (browser code). */
  entry: string;
  /** Style sheets, inlined in order (the app kit's `base.css` first); those the script imports follow. */
  styles: string[];
  /** The HTML file to write. */
  outFile: string;
  title: string;
}

export interface BuiltApp {
  outFile: string;
  bytes: number;
  gzipBytes: number;
}

/** The CSP of every app's HTML, for a script and a style sheet of these hashes. */
export function appContentSecurityPolicy(scriptHash: string, styleHash: string): string {
  return [
    "default-src 'none'",
    `script-src '${scriptHash}'`,
    `style-src '${styleHash}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const sha256 = (text: string): string => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const esbuild = await import('esbuild');
  const bundled = await esbuild.build({
    entryPoints: [options.entry],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    // Not written: only names the outputs (the script, and the style sheets the script imports).
    outdir: path.join(path.dirname(options.outFile), '.app-build'),
    legalComments: 'none',
    logLevel: 'silent',
  });
  const script = bundled.outputFiles.find((f) => f.path.endsWith('.js'))!.text.trim();
  const imported = bundled.outputFiles.filter((f) => f.path.endsWith('.css')).map((f) => f.text);
  const css = [...(await Promise.all(options.styles.map((file) => readFile(file, 'utf8')))), ...imported].join('\n');
  const style = (await esbuild.transform(css, { loader: 'css', minify: true })).code.trim();
  // esbuild escapes "</script" inside strings; a closing tag in either part would end it early.
  if (/<\/script/i.test(script)) throw new Error(`${options.entry}: the bundle contains "</script", which would end the inline script`);
  if (/<\/style/i.test(style)) throw new Error(`${options.styles.join(', ')}: the styles contain "</style"`);
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${appContentSecurityPolicy(sha256(script), sha256(style))}">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeText(options.title)}</title>` +
    `<style>${style}</style></head><body><div id="app"></div><script>${script}</script></body></html>\n`;
  const bytes = Buffer.byteLength(html);
  const gzipBytes = gzipSync(html, { level: 9 }).length;
  if (bytes > APP_SIZE_LIMIT.bytes || gzipBytes > APP_SIZE_LIMIT.gzipBytes) {
    throw new Error(
      `${options.outFile}: ${bytes} bytes (${gzipBytes} gzipped) is over the budget of ${APP_SIZE_LIMIT.bytes} (${APP_SIZE_LIMIT.gzipBytes} gzipped)`,
    );
  }
  await mkdir(path.dirname(options.outFile), { recursive: true });
  await writeFile(options.outFile, html);
  return { outFile: options.outFile, bytes, gzipBytes };
}

function escapeText(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
