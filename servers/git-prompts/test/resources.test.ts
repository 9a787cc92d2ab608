import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, type TestSession } from '@suite/test-kit';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

describe('git:// resources', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-resources-'));
    repo = makeRepo(path.join(base, 'code', 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    makeRepo(path.join(base, 'code', 'lib'));
    git(repo, ['tag', 'v1']);
    for (let i = 1; i <= 25; i++) commit(repo, { 'counter.txt': `${i}\n` }, `Commit number ${i}`, `2024-06-${String(i).padStart(2, '0')}T10:00:00Z`);
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n', 'staged.txt': 'staged\n' });
    git(repo, ['add', 'staged.txt']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('lists the templates and, per repository, the resources worth listing', async () => {
    session = await open([path.join(base, 'code')]);
    const { resourceTemplates } = await session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'git://{repo}/status',
      'git://{repo}/diff/staged',
      'git://{repo}/diff/unstaged',
      'git://{repo}/log{?limit}',
      'git://{repo}/log/{range}',
      'git://{repo}/compare/{range}',
      'git://{repo}/show/{rev}',
      'git://{repo}/file/{path}',
      'git://{repo}/blame/{path}',
      'git://{repo}/stash',
    ]);
    const { resources } = await session.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'git://app/status',
      'git://lib/status',
      'git://app/diff/staged',
      'git://lib/diff/staged',
      'git://app/diff/unstaged',
      'git://lib/diff/unstaged',
      'git://app/log',
      'git://lib/log',
      'git://app/stash',
      'git://lib/stash',
    ]);
  });

  it('reads each template', async () => {
    session = await open([path.join(base, 'code')]);
    expect((await session.readResource('git://app/status')).text).toMatch(/^On branch main in app\n\nStaged for commit \(1\):\n {2}added: {8}staged\.txt\n\nNot staged \(1\):\n {2}modified: {5}src\/a\.ts$/);
    expect((await session.readResource('git://app/diff/staged')).contents[0]).toMatchObject({ uri: 'git://app/diff/staged', mimeType: 'text/x-diff', text: expect.stringMatching(/^diff --git a\/staged\.txt/) });
    expect((await session.readResource('git://app/diff/unstaged')).text).toMatch(/^diff --git a\/src\/a\.ts/);
    expect((await session.readResource('git://lib/diff/staged')).text).toBe('# No staged changes in lib.\n');
    const log = (await session.readResource('git://app/log')).text.split('\n');
    expect(log[0]).toMatch(/^[0-9a-f]{10} 2024-06-25 Test User: Commit number 25$/);
    expect(log).toHaveLength(22);
    expect(log[20]).toBe('# … more commits on the current branch: only the 20 newest are shown.');
    expect((await session.readResource('git://app/log?limit=2')).text).toMatch(/^[0-9a-f]{10} 2024-06-25 Test User: Commit number 25\n[0-9a-f]{10} 2024-06-24 Test User: Commit number 24\n# … more/);
    expect((await session.readResource(`git://app/log/${encodeURIComponent('HEAD~2..HEAD')}`)).text.split('\n')).toHaveLength(3);
    expect((await session.readResource('git://app/log/HEAD~1')).text.split('\n')).toHaveLength(2);
    const compare = await session.readResource(`git://app/compare/${encodeURIComponent('v1...HEAD')}`);
    expect(compare.text).toMatch(/^diff --git a\/counter\.txt b\/counter\.txt\nnew file mode/);
    expect((await session.readResource('git://app/compare/v1')).text).toBe(compare.text);
    expect((await session.readResource('git://app/show/HEAD')).contents[0]).toMatchObject({ mimeType: 'text/x-diff', text: expect.stringMatching(/Commit number 25/) });
    expect((await session.readResource(`git://app/show/${encodeURIComponent('v1:src/a.ts')}`)).text).toBe('export const a = 1;\n');
    expect((await session.readResource(`git://app/file/${encodeURIComponent('src/a.ts')}`)).text).toBe('export const a = 2;\n');
  });

  it('answers with JSON-RPC errors that say whose fault it is', async () => {
    session = await open([path.join(base, 'code')]);
    expect(await protocolError(session.readResource('git://nope/status'))).toMatchObject({ code: -32602, data: { kind: 'not_found' } });
    expect(await protocolError(session.readResource('git://app/show/no-such-rev'))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown revision "no-such-rev"/) });
    expect(await protocolError(session.readResource('git://app/log?limit=0'))).toMatchObject({ code: -32602, message: 'limit must be a whole number from 1 to 500.' });
    expect(await protocolError(session.readResource('git://app/file/missing.txt'))).toMatchObject({ code: -32602 });
    expect(await protocolError(session.readResource('git://app/file/src'))).toMatchObject({ code: -32602, message: 'src is not a regular file.' });
    expect(await protocolError(session.readResource('git://app/unknown'))).toMatchObject({ code: -32602 });
  });
});
