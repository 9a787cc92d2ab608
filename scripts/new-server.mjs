#!/usr/bin/env node
// Scaffolds servers/<name> from scripts/templates/server: pnpm new-server <name> ["description"]
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [name, description = `An MCP server: ${process.argv[2] ?? ''}`] = process.argv.slice(2);

if (!name || !/^[a-z][a-z0-9-]{1,40}$/.test(name)) {
  console.error('Usage: pnpm new-server <name> ["one-line description"]\n<name>: lower-case letters, digits and dashes, e.g. "weather".');
  process.exit(2);
}
const target = path.join(root, 'servers', name);
if (existsSync(target)) {
  console.error(`servers/${name} already exists.`);
  process.exit(1);
}

// count-words -> CountWords: used for the config type name.
const pascal = name.replace(/(^|-)([a-z0-9])/g, (_m, _dash, c) => c.toUpperCase());
const replacements = { __NAME__: name, __DESCRIPTION__: description.replace(/"/g, '\\"'), __CONFIG__: pascal };

await cp(path.join(root, 'scripts', 'templates', 'server'), target, { recursive: true });
async function fill(dir) {
  for (const entry of await readdir(dir)) {
    const file = path.join(dir, entry);
    if ((await stat(file)).isDirectory()) {
      await fill(file);
      continue;
    }
    let text = await readFile(file, 'utf8');
    for (const [key, value] of Object.entries(replacements)) text = text.split(key).join(value);
    await writeFile(file, text);
  }
}
await fill(target);
console.log(`Created servers/${name}. Next:\n  npx -y pnpm@10 install\n  npx -y pnpm@10 --filter @suite/server-${name} build\n  npx -y pnpm@10 --filter @suite/server-${name} test`);
