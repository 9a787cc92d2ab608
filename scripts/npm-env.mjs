// The environment for an npm or npx that a script of this repository starts.
//
// pnpm runs a script with npm_config_* variables of its own (verify-deps-before-run, its node-gyp,
// its user agent, the settings it read), and an npm started from there reads every one of them as
// its own configuration: npm 11 prints `npm warn Unknown env config "verify-deps-before-run"` for
// each key it does not know, on every run, and says a later major will refuse them. So under pnpm
// (its user agent in npm_config_user_agent) the npm_config_* variables are dropped, except those a
// person or CI sets on purpose and npm honours: the cache (CI's empty npm cache), nodedir (CI's Node
// headers for better-sqlite3), and where packages come from (registry, userconfig, certificates,
// proxies). npm reads the rest of the user's settings from their .npmrc files itself. Started
// outside pnpm, the environment is passed as it is.

const KEEP = new Set(['cache', 'nodedir', 'registry', 'userconfig', 'globalconfig', 'cafile', 'ca', 'strict_ssl', 'proxy', 'https_proxy', 'noproxy']);

/** `base` (process.env by default) without pnpm's npm_config_* variables, then `extra` on top. */
export function npmEnv(extra = {}, base = process.env) {
  const underPnpm = /^pnpm\//.test(base.npm_config_user_agent ?? '');
  const env = {};
  for (const [key, value] of Object.entries(base)) {
    const config = /^npm_config_(.+)$/i.exec(key);
    if (underPnpm && config && !KEEP.has(config[1].toLowerCase().replace(/-/g, '_'))) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}
