import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

async function makeFiles(root: string, files: string[]): Promise<void> {
  for (const rel of files) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), rel);
  }
}

describe('search_files', () => {
  let h: ReadSideHarness;
  let root: string;
  const paths = (out: { structured: Record<string, unknown> | undefined }): string[] =>
    (out.structured as { matches: { path: string }[] }).matches.map((m) => path.relative(root, m.path)).sort();

  beforeAll(async () => {
    h = await startReadSide();
    root = path.join(h.dir, 'repo');
    await makeFiles(root, ['a.ts', 'b.js', 'src/c.ts', 'src/deep/d.ts', 'node_modules/m/e.ts', 'src/node_modules/f.ts', '.hidden/g.ts', 'dist/h.ts']);
    await writeFile(path.join(root, '.gitignore'), 'dist/\n');
    await writeFile(path.join(h.outside, 'outside.ts'), '');
    await symlink(h.outside, path.join(root, 'escape'));
  });
  afterAll(async () => h.close());

  it('matches globs against paths relative to the search directory, returning full paths', async () => {
    const top = await h.session.callTool('search_files', { path: root, pattern: '*.ts' });
    expect(top.isError).toBe(false);
    expect(top.text).toBe(path.join(root, 'a.ts'));
    const all = await h.session.callTool('search_files', { path: root, pattern: '**/*.ts' });
    expect(paths(all)).toEqual(['.hidden/g.ts', 'a.ts', 'dist/h.ts', 'node_modules/m/e.ts', 'src/c.ts', 'src/deep/d.ts', 'src/node_modules/f.ts']);
    const dirs = await h.session.callTool('search_files', { path: root, pattern: '**/deep' });
    expect((dirs.structured as { matches: unknown[] }).matches).toEqual([{ path: path.join(root, 'src', 'deep'), type: 'directory' }]);
  });

  it('excludes paths and everything under excluded directories', async () => {
    const out = await h.session.callTool('search_files', { path: root, pattern: '**/*.ts', excludePatterns: ['node_modules', 'src/deep/**', '.hidden'] });
    expect(paths(out)).toEqual(['a.ts', 'dist/h.ts', 'src/c.ts']);
    const official = await h.session.callTool('search_files', { path: root, pattern: '**/*.ts', excludePatterns: ['**/node_modules/**'] });
    expect(paths(official).some((p) => p.includes('node_modules'))).toBe(false);
  });

  it('can respect .gitignore', async () => {
    const out = await h.session.callTool('search_files', { path: root, pattern: '**/*.ts', respectGitignore: true });
    expect(paths(out)).not.toContain('dist/h.ts');
    expect(paths(out)).toContain('src/c.ts');
  });

  it('never descends into a symlink that leaves the roots', async () => {
    const out = await h.session.callTool('search_files', { path: root, pattern: '**/outside.ts' });
    expect(out.text).toBe('No matches found');
    const link = await h.session.callTool('search_files', { path: root, pattern: 'escape' });
    expect((link.structured as { matches: unknown[] }).matches).toEqual([{ path: path.join(root, 'escape'), type: 'symlink' }]);
  });

  it('caps results with a marker', async () => {
    const out = await h.session.callTool('search_files', { path: root, pattern: '**/*', maxResults: 3 });
    expect((out.structured as { matches: unknown[]; truncated: boolean }).matches).toHaveLength(3);
    expect(out.structured).toMatchObject({ truncated: true });
    expect(out.text).toContain('[truncated: more than 3 matches');
  });

  it('refuses a file as the search root and a path outside the roots', async () => {
    const file = await h.session.callTool('search_files', { path: path.join(root, 'a.ts'), pattern: '*' });
    expect(file.isError).toBe(true);
    expect(file.text).toMatch(/Not a directory/);
    const outside = await h.session.callTool('search_files', { path: h.outside, pattern: '*' });
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/Access denied/);
  });
});
