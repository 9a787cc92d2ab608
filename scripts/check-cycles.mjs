#!/usr/bin/env node
// Fails on any import circle (type-only imports included: they too say the layering is unclear)
// among the TypeScript sources of the shared layer, the test kit, every server and the server template.
// Usage: node scripts/check-cycles.mjs [DIR...]   (default: shared/src, test-kit/src, servers/*/src, scripts/templates/server/src)
//        node scripts/check-cycles.mjs --self-test
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

// Static imports and re-exports (with or without `type`), side-effect imports and dynamic imports.
const IMPORT = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm;

function resolve(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base.replace(/\.(m?js|jsx)$/, (ext) => (ext === '.mjs' ? '.mts' : ext === '.jsx' ? '.tsx' : '.ts')), base, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

function graphOf(dirs) {
  const graph = new Map();
  for (const dir of dirs) {
    for (const file of sourceFiles(dir)) {
      const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      const edges = new Set();
      for (const m of text.matchAll(IMPORT)) {
        const target = resolve(file, m[1] ?? m[2]);
        if (target) edges.add(target);
      }
      graph.set(file, edges);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components; every component of two or more files (or a self-import) is a circle. */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const found = [];
  const visit = (v) => {
    info.set(v, { index, low: index, onStack: true });
    index += 1;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!info.has(w)) {
        visit(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
    }
    if (info.get(v).low === info.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        info.get(w).onStack = false;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!info.has(v)) visit(v);
  return found;
}

function defaultDirs() {
  const dirs = [path.join(root, 'shared', 'src'), path.join(root, 'test-kit', 'src'), path.join(root, 'scripts', 'templates', 'server', 'src')];
  for (const name of readdirSync(path.join(root, 'servers'))) {
    const src = path.join(root, 'servers', name, 'src');
    if (existsSync(src)) dirs.push(src);
  }
  return dirs;
}

function check(dirs) {
  const found = cycles(graphOf(dirs));
  for (const component of found) console.error(`import circle: ${component.map((f) => path.relative(root, f)).join(' <-> ')}`);
  return found;
}

if (process.argv[2] === '--self-test') {
  // The checker must see a circle made only of type imports, and pass a tree without one.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cycles-'));
  try {
    writeFileSync(path.join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
    writeFileSync(path.join(dir, 'b.ts'), "import { helper } from './c.js';\nexport type { A } from './a.js';\nexport interface B { n: number }\nhelper();\n");
    writeFileSync(path.join(dir, 'c.ts'), '// no imports\nexport function helper(): void {}\n');
    const found = cycles(graphOf([dir]));
    if (found.length !== 1 || found[0].length !== 2) throw new Error(`self-test: expected one circle a<->b, got ${JSON.stringify(found)}`);
    writeFileSync(path.join(dir, 'b.ts'), "export interface B { n: number }\n");
    if (cycles(graphOf([dir])).length !== 0) throw new Error('self-test: reported a circle in a tree without one');
    console.log('check-cycles self-test passed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const dirs = process.argv.length > 2 ? process.argv.slice(2).map((d) => path.resolve(d)) : defaultDirs();
  const found = check(dirs);
  if (found.length > 0) process.exit(1);
  console.log(`no import circles in ${dirs.length} source trees`);
}
