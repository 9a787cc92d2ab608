import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedSession } from '@suite/test-kit';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const pad = (n: number): string => String(n).padStart(3, '0');

describe('concurrent writers of one file', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing (npx -y pnpm@10 --filter @suite/server-filesystem build).`);
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('applies all of 100 concurrent edits of different lines through one server', async () => {
    const file = path.join(h.dir, 'hundred.txt');
    await writeFile(file, Array.from({ length: 100 }, (_, i) => `line ${pad(i + 1)}\n`).join(''));
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => h.session.callTool('edit_file', { path: file, edits: [{ oldText: `line ${pad(i + 1)}\n`, newText: `edited ${pad(i + 1)}\n` }] })),
    );
    expect(results.filter((r) => r.isError).map((r) => r.text)).toEqual([]);
    const final = await readFile(file, 'utf8');
    expect(final).toBe(Array.from({ length: 100 }, (_, i) => `edited ${pad(i + 1)}\n`).join(''));
    // Nothing of ours is left beside it.
    expect(await readdir(h.dir)).toEqual(['hundred.txt']);
  }, 60_000);

  it('serialises write_file with edits in flight: the last call wins whole, no edit lands on a replaced file', async () => {
    const file = path.join(h.dir, 'mixed.txt');
    await writeFile(file, Array.from({ length: 20 }, (_, i) => `row ${pad(i)}\n`).join(''));
    const edits = Array.from({ length: 20 }, (_, i) => h.session.callTool('edit_file', { path: file, edits: [{ oldText: `row ${pad(i)}\n`, newText: `ROW ${pad(i)}\n` }] }));
    const replaced = h.session.callTool('write_file', { path: file, content: 'replaced\n' });
    const outcomes = await Promise.all(edits);
    expect((await replaced).isError).toBe(false);
    // Edits queued before the write_file were applied to the old content; those after it found nothing to replace and said so.
    const applied = outcomes.filter((o) => !o.isError).length;
    expect(applied + outcomes.filter((o) => o.isError && o.text.includes('was not found')).length).toBe(20);
    expect(await readFile(file, 'utf8')).toBe('replaced\n');
  }, 60_000);

  it('waits for a write lock held by another live process, then edits', async () => {
    const file = path.join(h.dir, 'locked.txt');
    await writeFile(file, 'before\n');
    const entries = new Set(await readdir(h.dir));
    const held = await holdLockLikeAnotherServer(h.dir, file);
    const edit = h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'before', newText: 'after' }] }).then((out) => ({ out, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 400));
    // Still waiting: the file is untouched while the other process holds the lock.
    expect(await readFile(file, 'utf8')).toBe('before\n');
    const releasedAt = Date.now();
    await held.release();
    const { out, at } = await edit;
    expect(out.isError).toBe(false);
    expect(at).toBeGreaterThanOrEqual(releasedAt);
    expect(await readFile(file, 'utf8')).toBe('after\n');
    expect(new Set(await readdir(h.dir))).toEqual(entries);
  }, 30_000);

  it('breaks a write lock left by a process that was killed while holding it', async () => {
    const file = path.join(h.dir, 'orphan.txt');
    await writeFile(file, 'one\n');
    const held = await holdLockLikeAnotherServer(h.dir, file);
    await held.kill();
    const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'one', newText: 'two' }] });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('two\n');
    expect((await readdir(h.dir)).filter((n) => n.endsWith('.lock'))).toEqual([]);
  }, 30_000);

  it('starts over on fresh content when another program replaces the file between the read and the rename', async () => {
    const file = path.join(h.dir, 'raced.txt');
    // Big enough that writing and syncing the new version takes a while after the temporary file appears.
    const filler = `${'x'.repeat(99)}\n`.repeat(80_000);
    await writeFile(file, `target line\n${filler}`);
    const outside = path.join(h.base, 'outside', 'external.txt');
    await writeFile(outside, `target line\nexternal change\n${filler}`);
    let replaced = false;
    const watcher = watch(h.dir, (_event, name) => {
      if (!replaced && typeof name === 'string' && name.startsWith('.suite-') && name.endsWith('.tmp')) {
        replaced = true;
        // What an editor does on save: its own temporary file renamed over the target.
        void rename(outside, file);
      }
    });
    try {
      const out = await h.session.callTool('edit_file', { path: file, edits: [{ oldText: 'target line', newText: 'edited line' }] });
      expect(replaced).toBe(true);
      expect(out.isError).toBe(false);
      const final = await readFile(file, 'utf8');
      expect(final.startsWith('edited line\nexternal change\n')).toBe(true);
    } finally {
      watcher.close();
    }
  }, 60_000);

  it('two server processes editing one file in parallel, one edit at a time each: every reported success is in the final file', async () => {
    const file = path.join(h.dir, 'shared.txt');
    const perServer = 88;
    const lines = ['a', 'b'].flatMap((who) => Array.from({ length: perServer }, (_, i) => `${who} ${pad(i + 1)}\n`));
    await writeFile(file, lines.join(''));
    const servers: SpawnedSession[] = await Promise.all([spawnServer(bin, [h.dir]), spawnServer(bin, [h.dir])]);
    try {
      const run = async (session: SpawnedSession, who: string): Promise<{ ok: string[]; refused: string[] }> => {
        const ok: string[] = [];
        const refused: string[] = [];
        for (let i = 1; i <= perServer; i++) {
          const out = await session.callTool('edit_file', { path: file, edits: [{ oldText: `${who} ${pad(i)}\n`, newText: `${who.toUpperCase()} ${pad(i)} done\n` }] });
          (out.isError ? refused : ok).push(`${who.toUpperCase()} ${pad(i)} done`);
        }
        return { ok, refused };
      };
      const [a, b] = await Promise.all([run(servers[0]!, 'a'), run(servers[1]!, 'b')]);
      const final = await readFile(file, 'utf8');
      const lost = [...a.ok, ...b.ok].filter((line) => !final.includes(`${line}\n`));
      expect(lost).toEqual([]);
      // The write locks serialise the two servers, so nothing even had to be refused.
      expect(a.ok.length + b.ok.length).toBe(2 * perServer);
      expect(final.split('\n').filter(Boolean)).toHaveLength(2 * perServer);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  }, 120_000);
});

/**
 * Has a separate process hold the write lock of `file` as another suite server would: it takes the
 * lock file with the built shared layer's own naming and owner format, then waits, so the test can
 * release it (the holder removes its lock and exits) or kill the holder (SIGKILL: the lock stays).
 */
async function holdLockLikeAnotherServer(dir: string, file: string): Promise<{ release(): Promise<void>; kill(): Promise<void> }> {
  const tempFiles = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('@suite/shared')), 'files', 'temp-files.js')).href;
  const script = `
    import fs from 'node:fs';
    import path from 'node:path';
    import { lockName, lockOwnerText } from ${JSON.stringify(tempFiles)};
    const lock = path.join(${JSON.stringify(dir)}, lockName(${JSON.stringify(path.basename(file))}));
    fs.writeFileSync(lock, lockOwnerText(), { flag: 'wx' });
    process.stdout.write(lock + '\\n');
    process.stdin.on('data', () => { fs.unlinkSync(lock); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lock = await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())));
  expect(path.basename(lock)).toMatch(/^\.suite-[0-9a-f]{16}\.lock$/);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    release: async () => {
      child.stdin.write('go\n');
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
      expect(existsSync(lock)).toBe(true);
    },
  };
}
