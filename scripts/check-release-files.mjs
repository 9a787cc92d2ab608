#!/usr/bin/env node
// pnpm check:release-files: keeps what describes each server outside npm in step with the package
// and with the server itself.
//   servers/<name>/server.json   the MCP Registry entry (schema 2025-12-11): name = package.json
//                                mcpName = io.github.suite/<name>, description, version and the npm
//                                package's identifier and version as in package.json; its arguments
//                                are flags and positionals the built bin's --help shows, its
//                                environment variables are ones --help names, every variable of
//                                --help's Environment section is listed, secrets are marked.
//   servers/<name>/manifest.json the MCP Bundle manifest: version, description, license (and
//                                repository and homepage once package.json has them) as in
//                                package.json; the flags and environment variables its mcp_config
//                                passes are real. (Its tools and prompts: pnpm check:bundles.)
// --write rewrites every field that follows from package.json (versions after `changeset version`,
// descriptions, names) and leaves the hand-written ones alone; it needs no build. --self-test
// proves the check fails on the mistakes it is for.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The MCP Registry namespace of every server: io.github.<GitHub owner of the repository>. */
export const REGISTRY_NAMESPACE = 'io.github.suite';
export const SERVER_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const SECRET_NAME = /TOKEN|PASSWORD|SECRET|_KEY$|DATABASE_URL/;
const VERSION_RANGE = /^[\^~><=*]|\sx|\.x|\.\*|\|\||^latest$/;

// The keys the schema defines, so that a misspelt or snake_case field is caught, not ignored.
const SERVER_KEYS = ['$schema', 'name', 'title', 'description', 'version', 'repository', 'websiteUrl', 'icons', 'packages', 'remotes', '_meta'];
const PACKAGE_KEYS = ['registryType', 'registryBaseUrl', 'identifier', 'version', 'fileSha256', 'runtimeHint', 'transport', 'runtimeArguments', 'packageArguments', 'environmentVariables'];
const INPUT_KEYS = ['description', 'isRequired', 'format', 'value', 'isSecret', 'default', 'placeholder', 'choices', 'variables'];
const ARGUMENT_KEYS = [...INPUT_KEYS, 'type', 'name', 'valueHint', 'isRepeated'];
const ENV_KEYS = [...INPUT_KEYS, 'name'];
const FORMATS = ['string', 'number', 'boolean', 'filepath'];

/** What a built bin's --help says: flags (and whether they take a value), positionals, environment variables. */
export function parseHelp(text) {
  const flags = new Map();
  for (const m of text.matchAll(/^\s+(?:-\w, )?(--[a-z0-9-]+)(?: <[A-Z_]+>)?/gm)) flags.set(m[1], /<[A-Z_]+>/.test(m[0]));
  const usage = /^Usage: \S+ (.*)$/m.exec(text)?.[1] ?? '';
  const positionals = [];
  for (const m of usage.matchAll(/\[([^\]]+)\]|(\S+)/g)) {
    const token = (m[1] ?? m[2]).trim();
    if (token.startsWith('-') || token === '|' || token === 'options') continue;
    positionals.push({ name: token.replace(/\.\.\.$/, ''), required: m[2] !== undefined, repeated: token.endsWith('...') });
  }
  const section = /(?:^|\n)Environment:\n([\s\S]*?)(?:\n\n|\n?$)/.exec(text)?.[1] ?? '';
  const documented = new Set();
  for (const line of section.split('\n')) {
    const names = /^ {2}([A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*)\s/.exec(line)?.[1];
    if (names) for (const name of names.split(', ')) documented.add(name);
  }
  const mentioned = new Set([...text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => m[0]).concat([...documented]));
  return { flags, positionals, documented, mentioned };
}

function checkKeys(object, allowed, where, problems) {
  for (const key of Object.keys(object)) if (!allowed.includes(key)) problems.push(`${where}: unknown field "${key}"`);
}

function expectedRepository(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const m = url && /github\.com[/:]([^/]+)\/([^/.]+?)(?:\.git)?$/.exec(url);
  if (!m) return undefined;
  return { url: `https://github.com/${m[1]}/${m[2]}`, source: 'github', ...(pkg.repository?.directory ? { subfolder: pkg.repository.directory } : {}) };
}

/** server.json and manifest.json with every field that follows from package.json set from it. */
export function derived(name, pkg, serverJson, manifest) {
  const repository = expectedRepository(pkg);
  const server = { ...serverJson, $schema: SERVER_SCHEMA, name: pkg.mcpName, ...(manifest ? { title: manifest.display_name } : {}), description: pkg.description, version: pkg.version };
  delete server.repository;
  delete server.websiteUrl;
  if (repository) server.repository = repository;
  if (pkg.homepage) server.websiteUrl = pkg.homepage;
  // Key order as the schema lists them, so --write gives stable files.
  const ordered = Object.fromEntries(SERVER_KEYS.filter((k) => k in server).map((k) => [k, server[k]]));
  ordered.packages = (serverJson.packages ?? []).map((p) => (p.registryType === 'npm' ? { ...p, identifier: pkg.name, version: pkg.version } : p));
  let nextManifest;
  if (manifest) {
    nextManifest = { ...manifest, version: pkg.version, description: pkg.description, license: pkg.license };
    if (repository) nextManifest.repository = { type: 'git', url: repository.url };
    if (pkg.homepage) nextManifest.homepage = pkg.homepage;
  }
  return { server: ordered, manifest: nextManifest };
}

/** Every problem with one server's release files, as sentences. */
export function check(name, { pkg, serverJson, manifest, help, versionOutput }) {
  const problems = [];
  const expectedName = `${REGISTRY_NAMESPACE}/${name}`;
  if (pkg.mcpName !== expectedName) problems.push(`package.json: mcpName is ${JSON.stringify(pkg.mcpName)}, expected "${expectedName}"`);
  const repository = expectedRepository(pkg);
  if (repository && `io.github.${new URL(repository.url).pathname.split('/')[1]}`.toLowerCase() !== REGISTRY_NAMESPACE.toLowerCase()) {
    problems.push(`package.json: the repository's GitHub owner does not match the registry namespace ${REGISTRY_NAMESPACE} (the registry verifies one against the other)`);
  }
  if (!versionOutput.includes(pkg.version)) problems.push(`--version prints ${JSON.stringify(versionOutput.trim())}, the package is ${pkg.version}`);

  // server.json against the schema's rules.
  if (!serverJson) return [...problems, 'server.json is missing'];
  checkKeys(serverJson, SERVER_KEYS, 'server.json', problems);
  if (!/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(serverJson.name ?? '')) problems.push(`server.json: name ${JSON.stringify(serverJson.name)} is not namespace/name`);
  if (!serverJson.description || serverJson.description.length > 100) problems.push(`server.json: description must be 1 to 100 characters (it is ${serverJson.description?.length ?? 0}); package.json's description is used, so shorten that`);
  if (serverJson.title !== undefined && (serverJson.title.length < 1 || serverJson.title.length > 100)) problems.push('server.json: title must be 1 to 100 characters');
  if (!serverJson.version || VERSION_RANGE.test(serverJson.version)) problems.push(`server.json: version ${JSON.stringify(serverJson.version)} must be one exact version`);
  const npmPackages = (serverJson.packages ?? []).filter((p) => p.registryType === 'npm');
  if (npmPackages.length !== 1) problems.push(`server.json: expected exactly one npm package, found ${npmPackages.length}`);
  for (const [i, p] of (serverJson.packages ?? []).entries()) {
    const where = `server.json packages[${i}]`;
    checkKeys(p, PACKAGE_KEYS, where, problems);
    if (p.registryType === 'npm' && p.registryBaseUrl !== undefined && p.registryBaseUrl !== 'https://registry.npmjs.org') problems.push(`${where}: the official registry accepts only https://registry.npmjs.org`);
    if (p.transport?.type !== 'stdio') problems.push(`${where}: transport must be {"type": "stdio"} (the npm package speaks stdio by default)`);
    for (const [j, a] of (p.packageArguments ?? []).entries()) {
      const at = `${where}.packageArguments[${j}]`;
      checkKeys(a, ARGUMENT_KEYS, at, problems);
      if (a.format !== undefined && !FORMATS.includes(a.format)) problems.push(`${at}: format ${a.format} is not one of ${FORMATS.join(', ')}`);
      if (!a.description) problems.push(`${at}: needs a description`);
      if (a.type === 'named') {
        if (!help.flags.has(a.name)) problems.push(`${at}: ${a.name} is not a flag of the server (--help)`);
        else if (!help.flags.get(a.name)) problems.push(`${at}: ${a.name} takes no value, but a named argument is "--flag value"`);
      } else if (a.type === 'positional') {
        if (!a.valueHint && a.value === undefined) problems.push(`${at}: a positional argument needs valueHint or value`);
      } else problems.push(`${at}: type must be "named" or "positional"`);
    }
    const positional = (p.packageArguments ?? []).filter((a) => a.type === 'positional');
    if (positional.length > help.positionals.length) problems.push(`${where}: ${positional.length} positional arguments, the usage line has ${help.positionals.length}`);
    for (const [j, a] of positional.entries()) {
      const real = help.positionals[j];
      if (!real) continue;
      if (Boolean(a.isRepeated) !== real.repeated) problems.push(`${where}: positional "${a.valueHint}" isRepeated must be ${real.repeated} (usage: ${real.name}${real.repeated ? '...' : ''})`);
      if (Boolean(a.isRequired) !== real.required) problems.push(`${where}: positional "${a.valueHint}" isRequired must be ${real.required} (the usage line ${real.required ? 'requires' : 'brackets'} ${real.name})`);
    }
    const listed = new Set();
    for (const [j, e] of (p.environmentVariables ?? []).entries()) {
      const at = `${where}.environmentVariables[${j}] ${e.name}`;
      checkKeys(e, ENV_KEYS, at, problems);
      listed.add(e.name);
      if (!e.description) problems.push(`${at}: needs a description`);
      if (e.format !== undefined && !FORMATS.includes(e.format)) problems.push(`${at}: format ${e.format} is not one of ${FORMATS.join(', ')}`);
      if (!help.mentioned.has(e.name)) problems.push(`${at}: the server's --help never mentions ${e.name}`);
      if (SECRET_NAME.test(e.name) && e.isSecret !== true) problems.push(`${at}: looks like a secret, mark it isSecret`);
    }
    for (const name of help.documented) if (!listed.has(name)) problems.push(`${where}: --help documents ${name} under Environment, server.json does not list it`);
  }

  // The bundle manifest's metadata and the flags and variables its mcp_config passes.
  if (manifest) {
    const config = manifest.server?.mcp_config ?? {};
    for (const arg of config.args ?? []) if (arg.startsWith('--') && !help.flags.has(arg.split('=')[0])) problems.push(`manifest.json: mcp_config passes ${arg}, not a flag of the server`);
    for (const variable of Object.keys(config.env ?? {})) if (!help.mentioned.has(variable)) problems.push(`manifest.json: mcp_config sets ${variable}, which the server's --help never mentions`);
    for (const [key, option] of Object.entries(manifest.user_config ?? {})) {
      if (option.type === 'string' && /token|password|secret|url/i.test(key) && option.sensitive !== true && /password|token|secret/i.test(option.description)) problems.push(`manifest.json: user_config.${key} may hold a secret, mark it sensitive`);
    }
  }

  // Finally: every field that follows from package.json must be as package.json says.
  const want = derived(name, pkg, serverJson, manifest);
  if (JSON.stringify(want.server) !== JSON.stringify(serverJson)) problems.push('server.json: fields that follow from package.json are out of date (name, title, description, version, repository, websiteUrl, package identifier or version): run pnpm sync:release-files');
  if (manifest && JSON.stringify(want.manifest) !== JSON.stringify(manifest)) problems.push('manifest.json: version, description, license, repository or homepage differ from package.json: run pnpm sync:release-files');
  return problems;
}

function load(name, { runBin = true } = {}) {
  const dir = path.join(root, 'servers', name);
  const pkg = readJson(path.join(dir, 'package.json'));
  const serverFile = path.join(dir, 'server.json');
  const manifestFile = path.join(dir, 'manifest.json');
  const inputs = {
    pkg,
    serverJson: existsSync(serverFile) ? readJson(serverFile) : undefined,
    manifest: existsSync(manifestFile) ? readJson(manifestFile) : undefined,
  };
  if (runBin) {
    const bin = path.join(dir, Object.values(pkg.bin ?? {})[0] ?? 'dist/index.js');
    if (!existsSync(bin)) throw new Error(`${path.relative(root, bin)} is missing: run pnpm build first`);
    const run = (flag) => execFileSync(process.execPath, [bin, flag], { encoding: 'utf8', timeout: 30_000 });
    inputs.help = parseHelp(run('--help'));
    inputs.versionOutput = run('--version');
  }
  return { serverFile, manifestFile, inputs };
}

function selfTest() {
  // Good inputs from the real filesystem server, then one mistake at a time.
  const good = load('filesystem').inputs;
  const clone = () => structuredClone({ ...good, help: undefined });
  const mistakes = [
    ['a version behind package.json', (i) => (i.serverJson.version = '0.0.1'), /server\.json: fields that follow/],
    ['a flag the server does not have', (i) => i.serverJson.packages[0].packageArguments.unshift({ type: 'named', name: '--no-such-flag', description: 'x' }), /--no-such-flag is not a flag/],
    ['a positional marked repeatable wrongly', (i) => (i.serverJson.packages[0].packageArguments.at(-1).isRepeated = false), /isRepeated must be true/],
    ['a snake_case field', (i) => (i.serverJson.packages[0].is_required = true), /unknown field "is_required"/],
    ['a description over 100 characters', (i) => (i.serverJson.description = 'x'.repeat(101)), /1 to 100 characters/],
    ['an unmarked secret', (i) => i.serverJson.packages[0].environmentVariables = [{ name: 'MCP_AUTH_TOKEN', description: 'x' }], /mark it isSecret/],
    ['a variable the server never reads', (i) => i.serverJson.packages[0].environmentVariables = [{ name: 'FILESYSTEM_ROOTS', description: 'x' }], /never mentions FILESYSTEM_ROOTS/],
    ['a documented variable left out', (i) => (i.help = { ...good.help, documented: new Set(['FILESYSTEM_EXAMPLE']) }), /documents FILESYSTEM_EXAMPLE under Environment/],
    ['another mcpName', (i) => (i.pkg.mcpName = 'io.github.someone/filesystem'), /mcpName is/],
    ['a manifest version behind package.json', (i) => (i.manifest.version = '0.0.1'), /manifest\.json: version/],
  ];
  let failures = 0;
  const base = check('filesystem', good);
  if (base.length) {
    console.error(`FAIL self-test: the real filesystem files already have problems: ${base.join('; ')}`);
    failures++;
  }
  for (const [what, change, expect] of mistakes) {
    const inputs = { ...clone(), help: good.help };
    change(inputs);
    const problems = check('filesystem', inputs);
    if (problems.some((p) => expect.test(p))) console.log(`ok   self-test: ${what} is caught`);
    else {
      failures++;
      console.error(`FAIL self-test: ${what} is not caught (${problems.join('; ') || 'no problems reported'})`);
    }
  }
  console.log(`release files self-test: ${mistakes.length + 1 - failures} of ${mistakes.length + 1} cases right`);
  return failures === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const write = process.argv.includes('--write');
  if (process.argv.includes('--self-test')) process.exit(selfTest() ? 0 : 1);
  const names = readdirSync(path.join(root, 'servers')).filter((n) => existsSync(path.join(root, 'servers', n, 'package.json'))).sort();
  let failed = 0;
  for (const name of names) {
    try {
      // Writing needs only package.json (it runs right after `changeset version`, before any build).
      const { serverFile, manifestFile, inputs } = load(name, { runBin: !write });
      if (write) {
        if (!inputs.serverJson) throw new Error('server.json is missing (copy scripts/templates/server/server.json)');
        const want = derived(name, inputs.pkg, inputs.serverJson, inputs.manifest);
        writeFileSync(serverFile, `${JSON.stringify(want.server, null, 2)}\n`);
        if (want.manifest) writeFileSync(manifestFile, `${JSON.stringify(want.manifest, null, 2)}\n`);
        console.log(`${name}: server.json${want.manifest ? ' and manifest.json' : ''} follow package.json ${inputs.pkg.version}`);
        continue;
      }
      const problems = check(name, inputs);
      if (problems.length) {
        failed++;
        console.error(`FAIL ${name}:\n  ${problems.join('\n  ')}`);
      } else console.log(`ok   ${name}: server.json${inputs.manifest ? ', manifest.json' : ''} in step with package.json ${inputs.pkg.version} and --help`);
    } catch (error) {
      failed++;
      console.error(`FAIL ${name}: ${error.message}`);
    }
  }
  if (!write) console.log(`release files: ${names.length - failed} of ${names.length} servers in step`);
  process.exit(failed ? 1 : 0);
}
