import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

interface Match {
  path: string;
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

async function makeFiles(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

describe('search_content', () => {
  let h: ReadSideHarness;
  let root: string;
  const matches = (out: { structured: Record<string, unknown> | undefined }): Match[] => (out.structured as { matches: Match[] }).matches;

  beforeAll(async () => {
    h = await startReadSide();
    root = path.join(h.dir, 'code');
    await makeFiles(root, {
      'src/app.ts': 'import x from "y";\nconst Needle = 1;\n// needle in lower case\nexport {};\n',
      'src/util.js': 'function needle() {}\n',
      'src/crlf.txt': 'first\r\nneedle at end\r\nlast\r\n',
      'docs/readme.md': 'a.b.c literal dots\naxbxc not literal\n',
      'ignored/skip.ts': 'needle hidden by gitignore\n',
      'node_modules/lib/index.js': 'needle in deps\n',
      '.gitignore': 'ignored/\n',
      '.git/config': 'needle in git dir\n',
      'bin/blob.dat': Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2, 3])]),
      'ctx.txt': ['one', 'two', 'three needle', 'four', 'five', 'six', 'seven needle', 'eight'].join('\n'),
      'nl-at-end.txt': 'x\n',
    });
  });
  afterAll(async () => h.close());

  it('finds regex matches with path, line number and line, respecting .gitignore by default', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'needle', include: ['*.ts', '*.js'] });
    expect(out.isError).toBe(false);
    // Breadth-first, then by name: shallower files come first.
    expect(matches(out)).toEqual([
      { path: 'src/app.ts', line: 3, text: '// needle in lower case' },
      { path: 'src/util.js', line: 1, text: 'function needle() {}' },
      { path: 'node_modules/lib/index.js', line: 1, text: 'needle in deps' },
    ]);
    expect(out.text).toContain('src/app.ts:3:// needle in lower case');
    expect(out.text).not.toContain('skip.ts');
    expect(out.text).not.toContain('.git/');
    expect(out.structured).toMatchObject({ filesMatched: 3, truncated: false });
  });

  it('is case-insensitive on request, and can search .gitignored files when told', async () => {
    const insensitive = await h.session.callTool('search_content', { path: path.join(root, 'src'), pattern: 'NEEDLE', caseSensitive: false, include: ['*.ts'] });
    expect(matches(insensitive).map((m) => m.line)).toEqual([2, 3]);
    const all = await h.session.callTool('search_content', { path: root, pattern: 'hidden by', respectGitignore: false });
    expect(matches(all)).toEqual([{ path: 'ignored/skip.ts', line: 1, text: 'needle hidden by gitignore' }]);
  });

  it('searches literally when asked, and reports invalid regexes clearly', async () => {
    const literal = await h.session.callTool('search_content', { path: path.join(root, 'docs'), pattern: 'a.b.c', literal: true });
    expect(matches(literal).map((m) => m.line)).toEqual([1]);
    const regex = await h.session.callTool('search_content', { path: path.join(root, 'docs'), pattern: 'a.b.c' });
    expect(matches(regex).map((m) => m.line)).toEqual([1, 2]);
    const bad = await h.session.callTool('search_content', { path: root, pattern: '(unclosed' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/Invalid regular expression .*literal: true/);
  });

  it('refuses regexes with nested unbounded quantifiers (catastrophic backtracking) but not ordinary ones', async () => {
    for (const pattern of ['(a+)+$', '(\\w*)*x', '((ab)+)+', '(?:x+y?){2,}']) {
      const out = await h.session.callTool('search_content', { path: root, pattern });
      expect(out.isError, pattern).toBe(true);
      expect(out.text).toMatch(/repeated group that itself repeats/);
    }
    for (const pattern of ['(ab)+c', 'a+b+', '\\(a+\\)+', '[(]a+[)]+', '(a+)?', '(a+){1,3}', 'needle.*']) {
      expect((await h.session.callTool('search_content', { path: root, pattern })).isError, pattern).toBe(false);
    }
    // Literal text is never a regex.
    expect((await h.session.callTool('search_content', { path: root, pattern: '(a+)+', literal: true })).isError).toBe(false);
  });

  it('handles CRLF line endings and anchors', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'end$', include: ['*.txt'] });
    expect(matches(out)).toEqual([{ path: 'src/crlf.txt', line: 2, text: 'needle at end' }]);
  });

  it('skips binary files and counts them', async () => {
    const out = await h.session.callTool('search_content', { path: path.join(root, 'bin'), pattern: 'needle' });
    expect(matches(out)).toEqual([]);
    expect(out.structured).toMatchObject({ skippedBinary: 1, filesSearched: 0 });
    expect(out.text).toMatch(/No matches .*skipped 1 binary/);
  });

  it('returns context lines', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'needle', include: ['ctx.txt'], contextLines: 1 });
    expect(matches(out)).toEqual([
      { path: 'ctx.txt', line: 3, text: 'three needle', before: ['two'], after: ['four'] },
      { path: 'ctx.txt', line: 7, text: 'seven needle', before: ['six'], after: ['eight'] },
    ]);
    expect(out.text).toContain('ctx.txt-2-two\nctx.txt:3:three needle\nctx.txt-4-four\n--\nctx.txt-6-six');
  });

  it('excludes by glob and searches a single file', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'needle', exclude: ['node_modules', 'src'] });
    expect(matches(out).map((m) => m.path)).toEqual(['ctx.txt', 'ctx.txt']);
    const single = await h.session.callTool('search_content', { path: path.join(root, 'src', 'app.ts'), pattern: 'Needle' });
    expect(matches(single)).toEqual([{ path: path.join(root, 'src', 'app.ts'), line: 2, text: 'const Needle = 1;' }]);
  });

  it('does not report a phantom empty line after the final newline', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: '^$', include: ['nl-at-end.txt'] });
    expect(matches(out)).toEqual([]);
  });

  it('stops at maxResults and says there may be more', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'needle', maxResults: 2, respectGitignore: false });
    expect(matches(out)).toHaveLength(2);
    expect(out.structured).toMatchObject({ truncated: true });
    expect(out.text).toContain('[truncated: stopped at maxResults=2');
  });

  it('skips files over maxFileBytes', async () => {
    const out = await h.session.callTool('search_content', { path: root, pattern: 'needle', include: ['ctx.txt'], maxFileBytes: 10 });
    expect(out.structured).toMatchObject({ skippedTooLarge: 1, filesSearched: 0 });
  });
});

describe('search_content on large files', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide();
    const handle = await open(path.join(h.dir, 'big.log'), 'w');
    // ~8 MB across many chunks; the needle sits on known lines far apart.
    for (let block = 0; block < 100; block++) {
      const lines = Array.from({ length: 2000 }, (_, i) => {
        const n = block * 2000 + i + 1;
        return n === 3 || n === 150_001 || n === 199_999 ? `line ${n} ERROR boom` : `line ${n} ok ${'.'.repeat(25)}`;
      });
      await handle.write(`${lines.join('\n')}\n`);
    }
    await handle.close();
  });
  afterAll(async () => h.close());

  it('finds matches with exact line numbers across chunk boundaries', async () => {
    const out = await h.session.callTool('search_content', { path: h.dir, pattern: 'ERROR', contextLines: 1 });
    const found = (out.structured as { matches: Match[] }).matches;
    expect(found.map((m) => m.line)).toEqual([3, 150_001, 199_999]);
    expect(found.map((m) => m.text)).toEqual(['line 3 ERROR boom', 'line 150001 ERROR boom', 'line 199999 ERROR boom']);
    expect(found[1]?.before?.[0]).toMatch(/^line 150000 ok/);
    expect(found[2]?.after?.[0]).toMatch(/^line 200000 ok/);
  });

  it('reports progress and can be cancelled', async () => {
    const wide = path.join(h.dir, 'wide');
    for (let d = 0; d < 40; d++) {
      await mkdir(path.join(wide, `d${d}`), { recursive: true });
      for (let f = 0; f < 50; f++) await writeFile(path.join(wide, `d${d}`, `f${f}.txt`), `line one\nline two ${d}-${f}\n`);
    }
    const seen: number[] = [];
    const out = await h.session.callTool('search_content', { path: wide, pattern: 'two 39-49' }, { onprogress: (p) => seen.push(p.progress) });
    expect((out.structured as { matches: Match[] }).matches).toEqual([{ path: 'd39/f49.txt', line: 2, text: 'line two 39-49' }]);
    expect(out.structured).toMatchObject({ filesSearched: 2000 });
    expect(seen.length).toBeGreaterThan(0);
    const controller = new AbortController();
    controller.abort('stop before it starts');
    await expect(h.session.callTool('search_content', { path: wide, pattern: 'x' }, { signal: controller.signal })).rejects.toThrow();
    expect((await h.session.callTool('search_content', { path: wide, pattern: 'two 0-0$' })).structured).toMatchObject({ matches: [{ path: 'd0/f0.txt' }] });
  });
});
