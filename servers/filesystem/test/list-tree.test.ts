import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '@suite/shared';
import { walk, walkBatches } from '../src/walk.js';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

interface TreeNode {
  name: string;
  type: string;
  children?: TreeNode[];
}

async function makeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

describe('directory_tree', () => {
  let h: ReadSideHarness;
  let project: string;
  beforeAll(async () => {
    h = await startReadSide({ limits: { maxEntries: 1000 } });
    project = path.join(h.dir, 'project');
    await makeFiles(project, {
      'README.md': '#',
      'src/index.ts': '',
      'src/lib/util.ts': '',
      'src/lib/deep/x.ts': '',
      'node_modules/pkg/index.js': '',
      'src/node_modules/inner/a.js': '',
      'dist/out.js': '',
      'debug.log': '',
      '.gitignore': 'dist/\n*.log\n',
      'src/.gitignore': 'deep/\n',
      '.git/HEAD': 'ref',
    });
    await symlink(h.outside, path.join(project, 'escape'));
    const wide = path.join(h.dir, 'wide');
    for (let d = 0; d < 60; d++) await makeFiles(wide, Object.fromEntries(Array.from({ length: 10 }, (_, f) => [`d${String(d).padStart(2, '0')}/f${f}.txt`, ''])));
  });
  afterAll(async () => h.close());

  it('returns the official JSON shape, sorted by name, links as files and never followed', async () => {
    const out = await h.session.callTool('directory_tree', { path: path.join(project, 'src') });
    expect(out.isError).toBe(false);
    const tree = JSON.parse(out.text) as TreeNode[];
    expect(tree).toEqual([
      { name: '.gitignore', type: 'file' },
      { name: 'index.ts', type: 'file' },
      {
        name: 'lib',
        type: 'directory',
        children: [
          { name: 'deep', type: 'directory', children: [{ name: 'x.ts', type: 'file' }] },
          { name: 'util.ts', type: 'file' },
        ],
      },
      { name: 'node_modules', type: 'directory', children: [{ name: 'inner', type: 'directory', children: [{ name: 'a.js', type: 'file' }] }] },
    ]);
    expect(out.text).toBe(JSON.stringify(tree, null, 2));
    const shallow = await h.session.callTool('directory_tree', { path: project, maxDepth: 1 });
    const top = JSON.parse(shallow.text.slice(0, shallow.text.indexOf('\n[depth limit'))) as TreeNode[];
    expect(top.find((n) => n.name === 'escape')).toEqual({ name: 'escape', type: 'file' });
    expect((shallow.structured as { entries: { path: string; type: string }[] }).entries).toContainEqual({ path: 'escape', type: 'symlink', depth: 1 });
  });

  it('applies excludePatterns with the official meanings', async () => {
    const names = async (excludePatterns: string[]): Promise<string[]> => {
      const out = await h.session.callTool('directory_tree', { path: project, excludePatterns });
      return (out.structured as { entries: { path: string }[] }).entries.map((e) => e.path);
    };
    // A bare name matches at any depth, and everything under it.
    const noModules = await names(['node_modules']);
    expect(noModules.some((p) => p.includes('node_modules'))).toBe(false);
    expect(noModules).toContain('src/lib/util.ts');
    // A pattern with * is matched against the relative path only.
    const noTs = await names(['**/*.ts']);
    expect(noTs.some((p) => p.endsWith('.ts'))).toBe(false);
    expect(noTs).toContain('src/lib');
    const topLevelOnly = await names(['*.md']);
    expect(topLevelOnly).not.toContain('README.md');
  });

  it('answers an empty or malformed exclude pattern with an isError naming it, as search_files does (found by the fuzzer)', async () => {
    for (const pattern of ['', 'x'.repeat(70_000)]) {
      const out = await h.session.callTool('directory_tree', { path: project, excludePatterns: ['*.md', pattern] });
      expect(out.isError, `${pattern.length} characters`).toBe(true);
      expect(out.text).toMatch(/^Invalid glob in excludePatterns: "/);
    }
  });

  it('honours .gitignore files (root and nested) and skips .git when asked', async () => {
    const out = await h.session.callTool('directory_tree', { path: project, respectGitignore: true });
    const paths = (out.structured as { entries: { path: string }[] }).entries.map((e) => e.path);
    expect(paths).not.toContain('dist');
    expect(paths).not.toContain('debug.log');
    expect(paths).not.toContain('.git');
    expect(paths).not.toContain('src/lib/deep');
    expect(paths).toContain('src/lib/util.ts');
    // A subdirectory still obeys the .gitignore above it.
    const sub = await h.session.callTool('directory_tree', { path: path.join(project, 'src', 'lib'), respectGitignore: true });
    expect((sub.structured as { entries: { path: string }[] }).entries.map((e) => e.path)).toEqual(['util.ts']);
    const plain = await h.session.callTool('directory_tree', { path: project });
    expect((plain.structured as { entries: { path: string }[] }).entries.map((e) => e.path)).toEqual(expect.arrayContaining(['dist', 'debug.log', '.git']));
  });

  it('limits depth and says so', async () => {
    const out = await h.session.callTool('directory_tree', { path: project, maxDepth: 1 });
    const structured = out.structured as { entries: { depth: number }[]; depthLimited: boolean };
    expect(structured.entries.every((e) => e.depth === 1)).toBe(true);
    expect(structured.depthLimited).toBe(true);
    expect(out.text).toContain('[depth limit: directories at depth 1 are shown without their contents]');
    const tree = JSON.parse(out.text.slice(0, out.text.indexOf('\n[depth limit'))) as TreeNode[];
    expect(tree.find((n) => n.name === 'src')).toEqual({ name: 'src', type: 'directory', children: [] });
  });

  it('caps entries breadth-first with a marker saying how many more', async () => {
    const out = await h.session.callTool('directory_tree', { path: path.join(h.dir, 'wide'), maxEntries: 70 });
    const structured = out.structured as { entries: { path: string; depth: number }[]; returned: number; omitted: number; truncated: boolean };
    expect(structured.returned).toBe(70);
    expect(structured.truncated).toBe(true);
    expect(structured.omitted).toBe(60 + 600 - 70);
    // All 60 top-level directories come first.
    expect(structured.entries.slice(0, 60).every((e) => e.depth === 1)).toBe(true);
    expect(out.text).toContain('[truncated: 590 more entries not shown (limit 70)');
    const json = out.text.slice(0, out.text.indexOf('\n[truncated'));
    expect((JSON.parse(json) as TreeNode[]).length).toBe(60);
  });

  it('reports progress and stops when cancelled', async () => {
    const seen: number[] = [];
    const done = await h.session.callTool('directory_tree', { path: path.join(h.dir, 'wide') }, { onprogress: (p) => seen.push(p.progress) });
    expect(done.isError).toBe(false);
    expect(seen.length).toBeGreaterThan(0);
    const controller = new AbortController();
    const call = h.session.callTool('directory_tree', { path: path.join(h.dir, 'wide') }, { signal: controller.signal, onprogress: () => controller.abort('stop') });
    await expect(call).rejects.toThrow();
    // The session is still usable afterwards.
    expect((await h.session.callTool('list_directory', { path: h.dir })).isError).toBe(false);
  });

  it('refuses a file as the tree root', async () => {
    const out = await h.session.callTool('directory_tree', { path: path.join(project, 'README.md') });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/Not a directory/);
  });
});

describe('walker', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide();
    await makeFiles(h.dir, { 'a/1.txt': '', 'a/b/2.txt': '', 'c/3.txt': '' });
  });
  afterAll(async () => h.close());

  it('walks breadth-first in name order', async () => {
    const seen: string[] = [];
    for await (const entry of walk(h.dir)) seen.push(`${entry.depth}:${entry.relative}`);
    expect(seen).toEqual(['1:a', '1:c', '2:a/1.txt', '2:a/b', '2:c/3.txt', '3:a/b/2.txt']);
  });

  it('throws CancelledError once the signal fires', async () => {
    const controller = new AbortController();
    const run = async (): Promise<void> => {
      for await (const _batch of walkBatches(h.dir, { signal: controller.signal })) controller.abort();
    };
    await expect(run()).rejects.toBeInstanceOf(CancelledError);
  });

  it('fails on an unreadable start but skips unreadable subdirectories', async () => {
    const run = async (): Promise<void> => {
      for await (const _batch of walkBatches(path.join(h.dir, 'missing'))) {
        // nothing
      }
    };
    await expect(run()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
