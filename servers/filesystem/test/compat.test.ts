import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, makeTempDir, spawnServer, type TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS, buildServer } from '../src/server.js';

/**
 * Drop-in compatibility with @modelcontextprotocol/server-filesystem: the same 14 tools, the same
 * parameter names (and required ones), and at least the same annotations. The expectation is
 * written down here AND checked against the official server itself, spawned from node_modules.
 */
const OFFICIAL_TOOLS: Record<string, { params: string[]; required: string[] }> = {
  read_file: { params: ['path', 'tail', 'head'], required: ['path'] },
  read_text_file: { params: ['path', 'tail', 'head'], required: ['path'] },
  read_media_file: { params: ['path'], required: ['path'] },
  read_multiple_files: { params: ['paths'], required: ['paths'] },
  write_file: { params: ['path', 'content'], required: ['path', 'content'] },
  edit_file: { params: ['path', 'edits', 'dryRun'], required: ['path', 'edits'] },
  create_directory: { params: ['path'], required: ['path'] },
  list_directory: { params: ['path'], required: ['path'] },
  list_directory_with_sizes: { params: ['path', 'sortBy'], required: ['path'] },
  directory_tree: { params: ['path', 'excludePatterns'], required: ['path'] },
  move_file: { params: ['source', 'destination'], required: ['source', 'destination'] },
  search_files: { params: ['path', 'pattern', 'excludePatterns'], required: ['path', 'pattern'] },
  get_file_info: { params: ['path'], required: ['path'] },
  list_allowed_directories: { params: [], required: [] },
};
const WRITE_TOOLS = ['write_file', 'edit_file', 'create_directory', 'move_file', 'copy_file', 'delete_file'];

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { properties?: Record<string, { items?: { properties?: Record<string, unknown> } }>; required?: string[] };
  outputSchema?: { properties?: Record<string, unknown> };
  annotations?: Record<string, unknown>;
}

const officialBin = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');

describe('compatibility with the official filesystem server', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let official: TestSession;
  let ours: TestSession;
  let oursReadOnly: TestSession;
  let officialTools: ListedTool[];
  let ourTools: ListedTool[];
  const hubs: ChangeHub[] = [];

  const inProcess = async (readOnly: boolean): Promise<TestSession> => {
    const changes = new ChangeHub();
    hubs.push(changes);
    return connectInProcess(buildServer({ directories: [dir], aliases: [dir], readOnly, limits: DEFAULT_LIMITS }, { changes }));
  };

  beforeAll(async () => {
    ({ dir, cleanup } = await makeTempDir('fs-compat-'));
    official = await spawnServer(officialBin, [dir]);
    ours = await inProcess(false);
    oursReadOnly = await inProcess(true);
    officialTools = (await official.client.listTools()).tools as ListedTool[];
    ourTools = (await ours.client.listTools()).tools as ListedTool[];
  }, 30_000);
  afterAll(async () => {
    await official?.close();
    await ours?.close();
    await oursReadOnly?.close();
    for (const hub of hubs) await hub.close();
    await cleanup?.();
  });

  it('the official server still has exactly the 14 tools and parameters this test expects', () => {
    const listed = Object.fromEntries(
      officialTools.map((t) => [t.name, { params: Object.keys(t.inputSchema.properties ?? {}), required: [...(t.inputSchema.required ?? [])].sort() }]),
    );
    const expected = Object.fromEntries(Object.entries(OFFICIAL_TOOLS).map(([name, spec]) => [name, { params: spec.params, required: [...spec.required].sort() }]));
    expect(listed).toEqual(expected);
  });

  it('we expose all 14 official tools with the same parameter names and required parameters', () => {
    for (const [name, spec] of Object.entries(OFFICIAL_TOOLS)) {
      const tool = ourTools.find((t) => t.name === name);
      expect(tool, name).toBeDefined();
      const params = Object.keys(tool!.inputSchema.properties ?? {});
      expect(params, name).toEqual(expect.arrayContaining(spec.params));
      expect([...(tool!.inputSchema.required ?? [])].sort(), name).toEqual([...spec.required].sort());
    }
    const editItems = ourTools.find((t) => t.name === 'edit_file')?.inputSchema.properties?.edits?.items?.properties ?? {};
    expect(Object.keys(editItems)).toEqual(expect.arrayContaining(['oldText', 'newText']));
  });

  it('our annotations agree with every annotation the official server sets, and set all of them', () => {
    for (const official of officialTools) {
      const tool = ourTools.find((t) => t.name === official.name)!;
      for (const [key, value] of Object.entries(official.annotations ?? {})) {
        expect(tool.annotations?.[key], `${official.name}.${key}`).toBe(value);
      }
    }
    for (const tool of ourTools) {
      for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations?.[key], `${tool.name}.${key}`).toBe('boolean');
      }
    }
  });

  it('every tool has an outputSchema with real fields (not only the text repeated)', () => {
    for (const tool of ourTools) {
      const fields = Object.keys(tool.outputSchema?.properties ?? {});
      expect(fields.length, tool.name).toBeGreaterThan(1);
    }
  });

  it('read_file says it is deprecated in favour of read_text_file', () => {
    expect(ourTools.find((t) => t.name === 'read_file')?.description).toMatch(/deprecated.*read_text_file/i);
  });

  it('--read-only registers no write tool at all, and keeps every read tool', async () => {
    const names = (await oursReadOnly.client.listTools()).tools.map((t) => t.name);
    for (const w of WRITE_TOOLS) expect(names).not.toContain(w);
    for (const name of Object.keys(OFFICIAL_TOOLS).filter((n) => !WRITE_TOOLS.includes(n))) expect(names).toContain(name);
    expect(names).toContain('search_content');
    const call = await oursReadOnly.client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }).then(
      (r) => ({ ok: true as const, r }),
      (e: Error) => ({ ok: false as const, e }),
    );
    // Unknown tool: a protocol error, or an isError result; never a write.
    if (call.ok) expect(call.r.isError).toBe(true);
    else expect(call.e.message).toMatch(/Unknown tool|not found/i);
  });

  it('answers the same read calls with the same text as the official server', async () => {
    const { writeFile, mkdir } = await import('node:fs/promises');
    await writeFile(path.join(dir, 'same.txt'), 'one\ntwo\nthree\n');
    await mkdir(path.join(dir, 'sub'), { recursive: true });
    await writeFile(path.join(dir, 'sub', 'x.md'), '# x\n');
    const file = path.join(dir, 'same.txt');
    // (tail is left out: the official tail of a file ending in a newline drops its last line.)
    for (const args of [{ path: file }, { path: file, head: 2 }]) {
      const a = await official.callTool('read_text_file', args);
      const b = await ours.callTool('read_text_file', args);
      expect(b.text, JSON.stringify(args)).toBe(a.text);
    }
    const search = async (s: TestSession): Promise<string> => (await s.callTool('search_files', { path: dir, pattern: '**/*.md' })).text;
    expect(await search(ours)).toBe(await search(official));
    const tree = async (s: TestSession): Promise<unknown> => JSON.parse((await s.callTool('directory_tree', { path: path.join(dir, 'sub') })).text);
    expect(await tree(ours)).toEqual(await tree(official));
  });
});
