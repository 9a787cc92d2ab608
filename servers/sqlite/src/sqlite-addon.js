// @ts-check
/**
 * better-sqlite3, from the line that is safe on the Node.js running it. Plain JavaScript, because
 * the query process (worker/query-process.js) runs from the sources in tests and imports it too.
 *
 * better-sqlite3 12 (a classic addon on node::ObjectWrap, compiled for each Node) aborts a Node
 * 24.21 process when the garbage collector finalizes one of its connections: Node 24's
 * ObjectWrap removes an environment cleanup hook from a finalizer that has no environment. 13 is
 * built on Node-API (one prebuilt binary for every Node from 22) and has no such finalizer, but it
 * needs Node-API 10, which Node 20 and Node 22 before 22.14 lack (loading it there crashes the
 * process rather than throwing). So: 13 where Node-API 10 exists, 12 otherwise. Both ship with
 * the package (13 as the optional dependency `better-sqlite3-13`, an npm alias).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Node-API version from which better-sqlite3 13 loads. */
export const NODE_API_FOR_LINE_13 = 10;

/**
 * Which better-sqlite3 line this Node gets, and why, for --version-style diagnostics and tests.
 * @returns {{ line: 12 | 13, packageName: 'better-sqlite3' | 'better-sqlite3-13' }}
 */
export function chooseSqliteAddon(napi = Number(process.versions.napi)) {
  return napi >= NODE_API_FOR_LINE_13 ? { line: 13, packageName: 'better-sqlite3-13' } : { line: 12, packageName: 'better-sqlite3' };
}

/** @returns {{ Database: typeof import('better-sqlite3'), line: 12 | 13 }} */
function load() {
  const chosen = chooseSqliteAddon();
  // Literal names, not chosen.packageName: the MCP Bundle staging finds the packages to ship by them.
  if (chosen.line === 12) return { Database: require('better-sqlite3'), line: 12 };
  try {
    return { Database: require('better-sqlite3-13'), line: 13 };
  } catch (error) {
    // An install that left the optional line out (npm --omit=optional): 12 still works, until the
    // garbage collector finalizes a connection on an affected Node 24; say so on stderr.
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'MODULE_NOT_FOUND') throw error;
    process.stderr.write('better-sqlite3-13 is not installed; using better-sqlite3 12, which can abort Node 24. Reinstall without --omit=optional.\n');
    return { Database: require('better-sqlite3'), line: 12 };
  }
}

const loaded = load();

/**
 * The better-sqlite3 Database constructor.
 * @type {typeof import('better-sqlite3')}
 */
const Database = loaded.Database;
export default Database;

/** The line loaded: 12 or 13. */
export const sqliteAddonLine = loaded.line;
