import { execFileSync } from 'node:child_process';
import { chmod, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

describe('edit_file', () => {
  let h: WriteSideHarness;
  let counter = 0;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  async function fixture(content: string | Buffer): Promise<string> {
    const file = path.join(h.dir, `file-${++counter}.txt`);
    await writeFile(file, content);
    return file;
  }

  it('replaces a unique match, writes the file and returns a fenced unified diff', async () => {
    const file = await fixture('alpha\nbeta\ngamma\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'beta', newText: 'BETA' }] });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('alpha\nBETA\ngamma\n');
    const diff = [`--- ${file}\toriginal`, `+++ ${file}\tmodified`, '@@ -1,3 +1,3 @@', ' alpha', '-beta', '+BETA', ' gamma', ''].join('\n');
    expect(out.structured).toMatchObject({ path: file, dryRun: false, changed: true, diff, added: 1, removed: 1, lineEnding: 'lf' });
    expect(out.structured?.edits).toEqual([{ edit: 1, replacements: 1, matching: 'exact', lines: [2] }]);
    expect(out.text).toContain(`\`\`\`diff\n${diff}\`\`\``);
  });

  it('dryRun returns the diff and leaves the file untouched', async () => {
    const file = await fixture('one\ntwo\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'two', newText: 'three' }], dryRun: true });
    expect(out.isError).toBe(false);
    expect(out.text).toContain('Dry run');
    expect(out.structured).toMatchObject({ dryRun: true, changed: true });
    expect(out.structured?.diff).toContain('+three');
    expect(await readFile(file, 'utf8')).toBe('one\ntwo\n');
  });

  it('fails clearly when oldText occurs more than once, naming the lines, and changes nothing', async () => {
    const file = await fixture('x = 1\ny = 2\nx = 1\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'x = 1', newText: 'x = 3' }] });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('Edit #1');
    expect(out.text).toContain('occurs 2 times');
    expect(out.text).toContain('lines 1, 3');
    expect(out.text).toContain('replaceAll: true');
    expect(await readFile(file, 'utf8')).toBe('x = 1\ny = 2\nx = 1\n');
  });

  it('replaces every occurrence with replaceAll: true', async () => {
    const file = await fixture('x = 1\ny = 2\nx = 1\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'x = 1', newText: 'x = 3', replaceAll: true }] });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('x = 3\ny = 2\nx = 3\n');
    expect(out.structured?.edits).toEqual([{ edit: 1, replacements: 2, matching: 'exact', lines: [1, 3] }]);
  });

  it('applies edits in order, all or nothing: a later edit that is not found names itself and nothing is written', async () => {
    const file = await fixture('first\nsecond\n');
    const out = await h.session.callTool('edit_file', {
      path: file,
      edits: [
        { oldText: 'first', newText: 'FIRST' },
        { oldText: 'no such text', newText: 'x' },
      ],
    });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('Edit #2');
    expect(out.text).toContain('"no such text"');
    expect(out.text).toContain('not found');
    expect(await readFile(file, 'utf8')).toBe('first\nsecond\n');
  });

  it('sees the result of earlier edits in later ones', async () => {
    const file = await fixture('a\n');
    const out = await h.session.callTool('edit_file', {
      path: file,
      edits: [
        { oldText: 'a', newText: 'b' },
        { oldText: 'b', newText: 'c' },
      ],
    });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('c\n');
  });

  it('falls back to whitespace-tolerant matching, re-indents the new text, and says what it did', async () => {
    const file = await fixture('function f() {\n    if (x) {\n        return 1;\n    }\n}\n');
    const out = await h.session.callTool('edit_file', {
      path: file,
      edits: [{ oldText: 'if (x) {\n    return 1;\n}', newText: 'if (x) {\n    return 2;\n}' }],
    });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('function f() {\n    if (x) {\n        return 2;\n    }\n}\n');
    expect(out.structured?.edits).toEqual([{ edit: 1, replacements: 1, matching: 'whitespace-tolerant', lines: [2] }]);
    expect(out.text).toContain('no exact match');
    expect(out.text).toContain('ignoring indentation and whitespace');
  });

  it('tolerates trailing whitespace and tabs versus spaces', async () => {
    const file = await fixture('\tkey:   value   \n\tother: 1\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: '  key: value\n  other: 1\n', newText: '  key: changed\n  other: 1\n' }] });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('\tkey: changed\n\tother: 1\n');
  });

  it('refuses an ambiguous whitespace-tolerant match unless replaceAll is set', async () => {
    const file = await fixture('  a b\n  c\n  a  b\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'a b ', newText: 'z' }] });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('occurs 2 times');
    const all = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'a b ', newText: 'z', replaceAll: true }] });
    expect(all.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('  z\n  c\n  z\n');
  });

  it('keeps CRLF line endings, even when the edit is written with LF', async () => {
    const file = await fixture('one\r\ntwo\r\nthree\r\n');
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'one\ntwo', newText: 'one\n2\nextra' }] });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('one\r\n2\r\nextra\r\nthree\r\n');
    expect(out.structured).toMatchObject({ lineEnding: 'crlf' });
    // The diff is in LF, readable without stray carriage returns.
    expect(out.structured?.diff).not.toContain('\r');
  });

  it('keeps a missing final newline and a present one', async () => {
    const without = await fixture('a\nb');
    await h.session.callTool('edit_file', { path: without, edits: [{ oldText: 'b', newText: 'c' }] });
    expect(await readFile(without, 'utf8')).toBe('a\nc');
    const withNewline = await fixture('a\nb\n');
    await h.session.callTool('edit_file', { path: withNewline, edits: [{ oldText: 'b', newText: 'c' }] });
    expect(await readFile(withNewline, 'utf8')).toBe('a\nc\n');
  });

  it('keeps a UTF-8 byte-order mark', async () => {
    const file = await fixture(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name,value\nx,1\n')]));
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'x,1', newText: 'x,2' }] });
    expect(out.isError).toBe(false);
    const bytes = await readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('name,value\nx,2\n');
  });

  it('keeps the file mode and leaves no temporary file', async () => {
    const file = await fixture('mode\n');
    await chmod(file, 0o600);
    await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'mode', newText: 'kept' }] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(h.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('reports no change when the edits leave the text as it is', async () => {
    const file = await fixture('same\n');
    const before = await stat(file);
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'same', newText: 'same' }] });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ changed: false, diff: '' });
    expect((await stat(file)).ino).toBe(before.ino);
  });

  it('refuses an empty oldText, binary files, directories and missing files', async () => {
    const text = await fixture('abc\n');
    const empty = await h.session.callTool('edit_file', { path: text, edits: [{ oldText: '', newText: 'x' }] });
    expect(empty.isError).toBe(true);
    expect(empty.text).toContain('oldText is empty');
    const binary = await fixture(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    const bin = await h.session.callTool('edit_file', { path: binary, edits: [{ oldText: 'PNG', newText: 'x' }] });
    expect(bin.isError).toBe(true);
    expect(bin.text).toContain('binary');
    const dir = await h.session.callTool('edit_file', { path: h.dir, edits: [{ oldText: 'a', newText: 'b' }] });
    expect(dir.isError).toBe(true);
    expect(dir.text).toContain('directory');
    const missing = await h.session.callTool('edit_file', { path: path.join(h.dir, 'missing.txt'), edits: [{ oldText: 'a', newText: 'b' }] });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('Not found');
    const none = await h.session.callTool('edit_file', { path: text, edits: [] });
    expect(none.isError).toBe(true);
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = path.join(h.dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const out = await h.session.callTool('edit_file', { path: fifo, edits: [{ oldText: 'a', newText: 'b' }] });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('not a regular file');
  });

  it('edits a line in the middle of a large file with a one-hunk diff', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `row ${i}`);
    const file = await fixture(`${lines.join('\n')}\n`);
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'row 123456\n', newText: 'row 123456 edited\n' }] });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ added: 1, removed: 1 });
    expect(out.structured?.diff).toContain('@@ -123454,7 +123454,7 @@');
    const after = await readFile(file, 'utf8');
    expect(after.split('\n')[123456]).toBe('row 123456 edited');
    expect(after.length).toBe(`${lines.join('\n')}\n`.length + ' edited'.length);
  });
});
