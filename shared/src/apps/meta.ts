/**
 * MCP Apps (`io.modelcontextprotocol/ui`): the names and shapes a tool and its UI resource carry.
 * Taken from the extension's specification (npm `@modelcontextprotocol/ext-apps` 2.x, spec.types):
 * the shapes are small and stable, so they are written here rather than importing the package,
 * whose app side brings the whole client SDK.
 */

/** The extension's key in `capabilities.extensions`. */
export const APPS_EXTENSION_ID = 'io.modelcontextprotocol/ui';

/** The MIME type of an app's HTML resource. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** The key of the older hosts (before `_meta.ui`), still read by some: written beside `_meta.ui`. */
export const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';

/** Who may see and call a tool: the model, the app (from this server only), or both (the default). */
export type AppVisibility = 'model' | 'app';

/** What a tool declares to be shown with an app. */
export interface ToolApp {
  /** The `ui://` resource the host renders for the tool's results. */
  resourceUri: string;
  /**
   * `['app']` makes an app-only tool: hosts keep it from the model, and this layer leaves it out
   * for clients that do not support apps (a text-only client never sees it). Default: both.
   */
  visibility?: AppVisibility[];
}

/** The `_meta` of a tool in tools/list: `ui` plus the older flat key. */
export function toolAppMeta(app: ToolApp): Record<string, unknown> {
  return {
    ui: { resourceUri: app.resourceUri, ...(app.visibility ? { visibility: [...app.visibility] } : {}) },
    [LEGACY_RESOURCE_URI_KEY]: app.resourceUri,
  };
}

/** True when a tool is for apps only (hidden from the model and from clients without apps). */
export function isAppOnly(app: ToolApp | undefined): boolean {
  return app?.visibility !== undefined && !app.visibility.includes('model');
}

/**
 * Whether a client renders apps: its capabilities (from `initialize` in 2025-11-25, from the
 * request's `_meta` in 2026-07-28) name the extension with our MIME type.
 */
export function clientSupportsApps(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== 'object' || extensions === null) return false;
  const ui = (extensions as Record<string, unknown>)[APPS_EXTENSION_ID] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(APP_MIME_TYPE);
}

/**
 * The CSP an app's resource asks the host for: no origin at all, so no network request and no
 * remote asset (the extension's secure default, stated rather than left out).
 */
export const APP_CSP = Object.freeze({ connectDomains: [] as string[], resourceDomains: [] as string[], frameDomains: [] as string[], baseUriDomains: [] as string[] });
