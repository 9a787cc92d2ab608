/**
 * The search engine both file-searching servers build on (filesystem's search_content, logs'
 * search_logs): text found in raw bytes (ByteFinder, anchored on its rarest byte), the literal a
 * regular expression requires, lines found from those hits, newlines counted with SIMD, and
 * worker threads kept warm between calls. Everything here but WorkerPool is a leaf that worker
 * threads load on their own (`@suite/shared/search`), without the rest of the shared layer.
 */
export { ByteFinder } from './byte-finder.js';
export { requiredLiteral } from './required-literal.js';
export { lineFinder, nextLineWith, lineText, type LineSpan } from './lines.js';
export { countNewlines, scanBuffer, simdNewlineCount } from './newlines.js';
export { WorkerPool, type WorkerPoolOptions } from './worker-pool.js';
