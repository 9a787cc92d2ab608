// The suite as users get it: every package packed with `pnpm pack` (which runs its prepack, so it
// builds first) and the tarballs installed with plain npm into an empty directory outside the
// workspace. Used by `pnpm smoke:packed` and `pnpm bench startup`.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { npmEnv } from './npm-env.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a command to completion; rejects with its output when it fails. The environment is npm's (scripts/npm-env.mjs). */
export function run(command, args, { cwd = root, env = npmEnv(), quiet = true, timeoutMs = 15 * 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output += chunk;
      if (!quiet) process.stderr.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`));
    });
  });
}

/** The publishable packages of the workspace: shared and every server. */
export function workspacePackages() {
  const dirs = ['shared', ...readdirSync(path.join(root, 'servers')).map((d) => `servers/${d}`)];
  return dirs
    .filter((rel) => existsSync(path.join(root, rel, 'package.json')))
    .map((rel) => {
      const manifest = JSON.parse(readFileSync(path.join(root, rel, 'package.json'), 'utf8'));
      return { name: manifest.name, version: manifest.version, rel, dir: path.join(root, rel), manifest };
    })
    .filter((p) => !p.manifest.private);
}

/**
 * The command that packs one package from the root of a clone, as the READMEs give it until the
 * packages are published ("Not on npm yet"): pnpm writes the tarball into the current directory.
 */
export const packCommand = (name) => ['npx', ['-y', 'pnpm@10', '--filter', name, 'pack']];

/** The file name `pnpm pack` (and `npm pack`) gives a package's tarball. */
export const tarballName = (p) => `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`;

/** `pnpm pack` of every package into `destination`, one at a time (each prepack rebuilds shared), with the READMEs' command. */
export async function packAll(destination) {
  await mkdir(destination, { recursive: true });
  const packages = workspacePackages();
  for (const p of packages) {
    const [command, args] = packCommand(p.name);
    await run(command, [...args, '--pack-destination', destination], { cwd: root });
    p.tarball = path.join(destination, tarballName(p));
    if (!existsSync(p.tarball)) throw new Error(`pnpm pack of ${p.name} wrote no ${path.basename(p.tarball)}`);
  }
  return packages;
}

/** The packages with tarballs already packed into `directory` (to iterate without packing again). */
export function packedIn(directory) {
  return workspacePackages().map((p) => {
    const tarball = path.join(directory, tarballName(p));
    if (!existsSync(tarball)) throw new Error(`no ${path.basename(tarball)} in ${directory}`);
    return { ...p, tarball };
  });
}

/** Installs tarballs (and registry specs) together with plain npm into `dir`, a new project. */
export async function installTarballs(dir, specs) {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'suite-packed-install', private: true }, null, 2));
  const started = performance.now();
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd: dir });
  return { seconds: (performance.now() - started) / 1000 };
}

/** The packages of an npm install (one per node_modules directory) and their bytes on disk. */
export async function installFootprint(dir) {
  const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8'));
  const packages = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/')).length;
  const bytes = Number((await run('du', ['-sb', path.join(dir, 'node_modules')])).split(/\s/)[0]);
  return { packages, bytes };
}

/** The entries of a .tgz: { path (without the leading package/), mode, size, data }. */
export function readTarball(file) {
  const tar = gunzipSync(readFileSync(file));
  const entries = [];
  const field = (header, start, length) => header.subarray(start, start + length).toString('utf8').replace(/\0[\s\S]*$/, '');
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const name = field(header, 0, 100);
    const prefix = field(header, 345, 155);
    const mode = parseInt(field(header, 100, 8).trim() || '0', 8);
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = field(header, 156, 1);
    const full = prefix ? `${prefix}/${name}` : name;
    const data = tar.subarray(offset + 512, offset + 512 + size);
    if (type === '0' || type === '') entries.push({ path: full.replace(/^package\//, ''), mode, size, data });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}
