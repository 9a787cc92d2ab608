import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { makeTempDir } from '@suite/test-kit';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const BIG = 'filesystem abuse kit\n'.repeat(200_000);

/** Files, a binary, links inside and out: what the tools meet in a real directory. */
async function fill(work: string): Promise<void> {
  await rm(work, { recursive: true, force: true });
  await mkdir(path.join(work, 'sub', 'deep'), { recursive: true });
  await mkdir(path.join(work, 'out'));
  await writeFile(path.join(work, 'a.txt'), 'alpha\nbeta\ngamma\n');
  await writeFile(path.join(work, 'sub', 'b.md'), '# Title\n\nSome *markdown*.\n');
  await writeFile(path.join(work, 'sub', 'deep', 'c.json'), '{"key": [1, 2, 3]}\n');
  await writeFile(path.join(work, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
  await symlink('a.txt', path.join(work, 'link-to-a'));
  await symlink('/etc/passwd', path.join(work, 'escape'));
}

/**
 * The filesystem server with two roots, writes on (its default): `work`, where the fuzzer's
 * relative paths land and destructive tools may wreck everything, and `fixed`, which holds the
 * cheap call's file and is named in no sample, so it outlives the fuzzing of delete_file.
 */
export const target: ConformanceTarget = {
  name: 'filesystem',
  bin: BIN,
  async prepare() {
    const { dir, cleanup } = await makeTempDir('fs-conformance-');
    const work = path.join(dir, 'work');
    const fixed = path.join(dir, 'fixed');
    await fill(work);
    await mkdir(fixed);
    await writeFile(path.join(fixed, 'page.txt'), 'line of text\n'.repeat(400));
    const followedFile = path.join(fixed, 'followed.txt');
    await writeFile(followedFile, 'followed\n');
    const output = (i: number): string => path.join(work, 'out', `file-${i}.txt`);
    return {
      args: [work, fixed],
      cheapCall: { name: 'read_text_file', arguments: { path: path.join(fixed, 'page.txt') } },
      followed: {
        uri: pathToFileURL(followedFile).href,
        change: (round) => writeFile(followedFile, `followed, changed in round ${round}\n`),
        refused: ['file:///etc/hostname', pathToFileURL(path.join(fixed, 'missing.txt')).href, 'nothing://at/all'],
      },
      allowedPaths: [dir],
      samples: [work, path.join(work, 'a.txt'), 'a.txt', 'sub', 'sub/b.md', 'sub/deep/c.json', 'image.png', 'link-to-a', 'escape', 'out', 'new.txt', 'sub/new-dir', '**/*.txt', '*.md', 'alpha', 'beta\ngamma'],
      namedSamples: {
        path: [work, path.join(work, 'a.txt'), 'a.txt', 'sub', 'sub/b.md', 'sub/deep/c.json', 'image.png', 'link-to-a', 'escape', 'new.txt', 'sub/new'],
        paths: ['a.txt', 'sub/b.md', 'image.png', 'escape'],
        source: ['a.txt', 'sub', 'link-to-a', 'escape'],
        destination: ['copy.txt', 'sub/moved.md', 'a.txt', 'sub'],
        pattern: ['*.txt', '**/*.md', 'alpha', 'b.*a', 'gamma$'],
        oldText: ['alpha', 'beta\ngamma', 'Title'],
        include: ['*.txt', 'sub/**'],
        exclude: ['deep', '*.png'],
        excludePatterns: ['deep', '**/*.json'],
      },
      inFlight: {
        // Ten 4 MB writes: the signal lands while some are being written.
        calls: Array.from({ length: 10 }, (_, i) => ({ name: 'write_file', arguments: { path: output(i), content: BIG } })),
        directories: [work],
        async check(answered) {
          for (let i = 0; i < 10; i++) {
            const content = await readFile(output(i), 'utf8').catch(() => undefined);
            // Written whole or not at all; and what was reported as written is there.
            if (content !== undefined && content !== BIG) throw new Error(`${output(i)} is partial: ${content.length} of ${BIG.length} characters`);
            if (answered[i]?.result && answered[i]?.result?.isError !== true && content === undefined) throw new Error(`${output(i)} was reported written but is missing`);
          }
        },
      },
      fuzz: { numRuns: 300, reset: () => fill(work) },
      cleanup,
    };
  },
};
