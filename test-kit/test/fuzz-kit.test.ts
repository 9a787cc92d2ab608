import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { SuiteServer } from '@suite/shared';
import { findForeignPaths, findStackTrace } from '../src/conformance.js';
import { FuzzConnection, fuzzCases, fuzzTool, type FuzzCase, type JsonSchema } from '../src/fuzz.js';
import { connectInProcess, spawnServer } from '../src/testing.js';

/** Schemas of the shapes the servers' tools use, published as tools/list publishes them. */
const SCHEMAS = {
  strings: z.object({
    path: z.string(),
    name: z.string().min(1).max(20),
    id: z.string().regex(/^[a-z]+-\d+$/),
    mode: z.enum(['fast', 'thorough']).optional(),
    limit: z.number().int().min(1).max(500).default(50),
  }),
  numbers: z.object({ n: z.number().int().min(-3).max(7), bytes: z.number().int().min(1024).max(262_144).default(65_536), negative: z.number().int().max(-5000).optional(), x: z.number().min(-1).max(1).optional(), big: z.number().int().optional(), ratio: z.number().gt(0).lt(1).optional() }),
  nested: z.object({
    files: z.array(z.object({ path: z.string().min(1), content: z.string() })).min(1).max(3),
    options: z.object({ deep: z.boolean().default(false), tags: z.array(z.string().max(5)).max(2).optional() }).optional(),
  }),
  alternatives: z.object({ value: z.union([z.string(), z.number()]), maybe: z.string().nullable(), params: z.record(z.string(), z.unknown()).optional(), flag: z.boolean() }),
  strict: z.object({ a: z.string(), b: z.array(z.string()).optional() }).strict(),
  empty: z.object({}),
};

/** A tool's input schema as tools/list publishes it: the answer of a server with one tool that takes `schema`. */
async function published(schema: z.ZodObject): Promise<JsonSchema> {
  const server = new SuiteServer({ name: '@suite/server-schema-probe', version: '0.0.1' }).tool({
    name: 'probe',
    description: 'Takes the schema.',
    input: schema,
    annotations: { title: 'Probe', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => 'ok',
  });
  const session = await connectInProcess(server);
  try {
    return (await session.client.listTools()).tools[0]!.inputSchema as JsonSchema;
  } finally {
    await session.close();
  }
}

async function sample(schema: z.ZodObject, numRuns: number, samples: string[] = []): Promise<FuzzCase[]> {
  return fc.sample(fuzzCases(await published(schema), { samples }), { numRuns, seed: 7 });
}

describe('fuzzCases: arguments from a published input schema', () => {
  it.each(Object.entries(SCHEMAS))('%s: accepted cases pass zod and each violation is rejected by it', async (_name, schema) => {
    const cases = await sample(schema, 600);
    const wrong = cases
      .filter((c) => schema.safeParse(c.args).success !== (c.violation === undefined))
      .map((c) => `${JSON.stringify(c.args).slice(0, 200)} ${c.violation ?? '(valid)'}: ${JSON.stringify(schema.safeParse(c.args).error?.issues[0])}`);
    expect(wrong).toEqual([]);
    // Both kinds occur, where the schema allows a violation.
    expect(cases.some((c) => c.violation === undefined)).toBe(true);
    if (schema !== SCHEMAS.empty) expect(cases.some((c) => c.violation !== undefined)).toBe(true);
  });

  it('is biased toward what breaks servers: traversal, NUL, option-like strings, odd Unicode, bounds, the target\'s own names', async () => {
    const texts = (await sample(z.object({ path: z.string() }), 3000, ['notes/todo.md'])).map((c) => c.args.path).filter((p): p is string => typeof p === 'string');
    const seen = (test: (s: string) => boolean): boolean => texts.some(test);
    expect(seen((s) => s.includes('../'))).toBe(true);
    expect(seen((s) => s.includes('\u0000'))).toBe(true);
    expect(seen((s) => s.startsWith('--'))).toBe(true);
    expect(seen((s) => s.startsWith('/etc/'))).toBe(true);
    expect(seen((s) => /[\u{10000}-\u{10FFFF}]/u.test(s))).toBe(true);
    expect(seen((s) => s.includes('\u202E'))).toBe(true);
    expect(seen((s) => s.includes('\u0301'))).toBe(true);
    expect(seen((s) => s.length > 4000)).toBe(true);
    expect(seen((s) => s === 'notes/todo.md')).toBe(true);
    expect(seen((s) => s.startsWith('notes/todo.md') && s !== 'notes/todo.md')).toBe(true);
    const numbers = (await sample(z.object({ n: z.number().int().min(1).max(1_000_000) }), 500)).map((c) => c.args.n);
    expect(numbers).toEqual(expect.arrayContaining([1, 1_000_000]));
    const unbounded = (await sample(z.object({ n: z.number().int() }), 500)).map((c) => c.args.n);
    expect(unbounded).toEqual(expect.arrayContaining([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]));
  });
});

describe('named samples', () => {
  it('offer the values of the server\'s world for arguments of that name, where they fit the schema', async () => {
    const schema = await published(z.object({ owner: z.string().regex(/^[a-z]+$/), files: z.array(z.object({ path: z.string() })).min(1).max(2), n: z.number().int().min(1).max(9) }));
    const cases = fc.sample(fuzzCases(schema, { namedSamples: { owner: ['acme', 'Not Valid!'], path: ['src/a.ts'], n: [3, 42] } }), { numRuns: 400, seed: 5 });
    const accepted = cases.filter((c) => c.violation === undefined);
    const share = (test: (c: FuzzCase) => boolean): number => accepted.filter(test).length / accepted.length;
    expect(share((c) => c.args.owner === 'acme')).toBeGreaterThan(0.2);
    expect(accepted.some((c) => c.args.owner === 'Not Valid!')).toBe(false);
    expect(share((c) => (c.args.files as { path: string }[]).some((f) => f.path === 'src/a.ts'))).toBeGreaterThan(0.2);
    expect(accepted.some((c) => c.args.n === 3)).toBe(true);
    expect(accepted.some((c) => c.args.n === 42)).toBe(false);
  });
});

describe('what counts as a leak', () => {
  const allowed = ['/tmp/sandbox-1'];

  it('finds paths of this machine outside the allowed ones, not URLs, API paths, relative paths or the caller\'s own words', () => {
    expect(findForeignPaths('Cannot read /etc/passwd: permission denied', allowed)).toEqual(['/etc/passwd']);
    expect(findForeignPaths('at file:///usr/lib/node_modules/x/index.js', allowed)).toEqual(['/usr/lib/node_modules/x/index.js']);
    expect(findForeignPaths('{"path":"/root/.ssh/id_rsa\\"}', allowed)).toEqual(['/root/.ssh/id_rsa']);
    expect(findForeignPaths('Wrote /tmp/sandbox-1/a.txt and /tmp/sandbox-1', allowed)).toEqual([]);
    expect(findForeignPaths('GET http://127.0.0.1:9/repos/acme/x and /repos/acme/x', allowed)).toEqual([]);
    expect(findForeignPaths('a/b/etc/passwd ~/x ./etc', allowed)).toEqual([]);
    // Repeating what the caller gave is fine, also inside a message that wraps it.
    expect(findForeignPaths('Access denied: "/etc/shadow" is outside', allowed, ['/etc/shadow'])).toEqual([]);
    expect(findForeignPaths('Invalid regular expression: /*.md /tmp/i: Nothing to repeat', allowed, ['*.md /tmp'])).toEqual([]);
    // Unless the server put a path of its own in front of it.
    expect(findForeignPaths('Not found: /home/someone/x.txt', allowed, ['x.txt'])).toEqual(['/home/someone/x.txt']);
    expect(findForeignPaths('Not found: /tmp/sandbox-1/x.txt', allowed, ['x.txt'])).toEqual([]);
  });

  it('finds stack traces, not ordinary text', () => {
    expect(findStackTrace('TypeError: x\n    at readThing (/srv/app/dist/index.js:10:5)')).toBeDefined();
    expect(findStackTrace('Error at node:internal/fs/promises:1:1')).toBeDefined();
    expect(findStackTrace('    at async Promise.all (index 0)\n    at run (file:///srv/x.js:3:9)')).toBeDefined();
    expect(findStackTrace('Not found: notes at 10:30, look at line 3')).toBeUndefined();
  });
});

describe('fuzzTool: it fails on a server that misbehaves', () => {
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

  function server(handler: (text: string) => string): SuiteServer {
    return new SuiteServer({ name: '@suite/server-fuzz-probe', version: '0.0.1' }).tool({
      name: 'echo',
      description: 'Answers about a text.',
      input: z.object({ text: z.string().max(100), count: z.number().int().min(0).max(10).optional() }),
      annotations: { title: 'Echo', ...readOnly },
      handler: async ({ text }) => handler(text),
    });
  }

  async function fuzz(handler: (text: string) => string): Promise<void> {
    const connection = new FuzzConnection(() => connectInProcess(server(handler)), true);
    try {
      const tool = (await (await connection.open()).client.listTools()).tools[0]!;
      await fuzzTool(connection, tool, { numRuns: 300, seed: 3, allowedPaths: ['/tmp/sandbox-1'], samples: ['hello'] });
    } finally {
      await connection.close();
    }
  }

  it('passes a tool that answers well', async () => {
    await fuzz((text) => `${text.length} characters`);
  });

  it('reports an unexpected failure', async () => {
    await expect(
      fuzz((text) => {
        if (text.includes('..')) throw new TypeError('cannot read properties of undefined');
        return 'ok';
      }),
    ).rejects.toThrow(/an unexpected failure, not a message the model can act on/);
  });

  it('reports a stack trace and a path of the machine in an answer', async () => {
    await expect(fuzz((text) => (text.includes('\u0000') ? `failed\n    at parse (${process.cwd()}/dist/x.js:1:2)` : 'ok'))).rejects.toThrow(/a stack trace in the answer/);
    await expect(fuzz((text) => (text.startsWith('-') ? `Could not open ${process.execPath}` : 'ok'))).rejects.toThrow(/paths of this machine outside the sandbox/);
  });

  it('reports a crash of the bin over stdio: the process exits, and its stderr is shown', async () => {
    const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crash-bin.mjs');
    const connection = new FuzzConnection(() => spawnServer(bin), false);
    try {
      const tool = (await (await connection.open()).client.listTools()).tools[0]!;
      await expect(fuzzTool(connection, tool, { numRuns: 300, seed: 3, allowedPaths: [] })).rejects.toThrow(/the server exited\. Its stderr ends:[\s\S]*escaped/);
    } finally {
      await connection.close();
    }
  }, 60_000);
});
