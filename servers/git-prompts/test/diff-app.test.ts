import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@suite/test-kit';
import { bridgeToApp, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection, resultText } from '@suite/shared/app-kit/rpc';
import { parseDiff, sideBySide, type ParsedDiff } from '../app/diff-model.js';
import { buildServer } from '../src/server.js';
import { Workspace } from '../src/workspace.js';
import { HOSTILE, HOSTILE_NAME, diffRepo, gitStagedDiff, hunkLines } from './diff-fixture.js';
import { config, git } from './helpers.js';

describe('the diff viewer against the ext-apps AppBridge and the real server', () => {
  let repo: ReturnType<typeof diffRepo> | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    repo?.cleanup();
    host = repo = undefined;
  });

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: reads git_diff_staged's answer as the files git changed, with git's lines and counts`, async () => {
      repo = diffRepo();
      const workspace = new Workspace(config([repo.dir]));
      host = await startAppServer(() => buildServer(workspace), era);
      const { bridge, port } = await bridgeToApp(host.client);
      const app = new HostConnection(port);
      let shown: ParsedDiff | undefined;
      app.on('ui/notifications/tool-result', (params) => (shown = parseDiff(resultText(params as never))));
      await app.initialize({ name: 'diff-test', version: '1' });
      const tools = (await host.client.listTools()).tools;
      for (const name of ['git_diff_unstaged', 'git_diff_staged', 'git_diff', 'git_show']) expect(tools.find((t) => t.name === name)?._meta).toMatchObject({ ui: { resourceUri: 'ui://git-prompts/diff.html' } });
      const args = { repo_path: repo.dir };
      const result = await host.client.callTool({ name: 'git_diff_staged', arguments: args });
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result as never);
      await waitUntil(() => shown !== undefined, { what: 'the diff' });
      const diff = shown!;
      expect(diff.title).toBe('Staged changes in app');
      const byPath = new Map(diff.files.map((f) => [f.path, f]));
      // Counts equal git's own (numstat), for every file with a text diff shown whole.
      const numstat = git(repo.dir, ['-c', 'core.quotePath=false', 'diff', '--cached', '--numstat', '-M']).trim().split('\n').map((l) => l.split('\t').map((part) => part.replace(/\{[^}]* => ([^}]*)\}/, '$1')));
      for (const [added, deleted, name] of numstat) {
        const file = byPath.get(name!);
        expect(file, `${name} in ${[...byPath.keys()].join(", ")}`).toBeDefined();
        if (added === '-' || name === 'big.txt') continue;
        expect([file!.added, file!.deleted], name).toEqual([Number(added), Number(deleted)]);
      }
      expect(byPath.get('src/new.ts')?.status).toBe('added');
      expect(byPath.get('docs/gone.md')?.status).toBe('deleted');
      expect(byPath.get('src/new-name.ts')).toMatchObject({ status: 'renamed', from: 'src/old-name.ts' });
      expect(byPath.get('logo.png')).toMatchObject({ status: 'binary' });
      expect(byPath.get('logo.png')!.notes[0]).toMatch(/^Binary file: /);
      expect(byPath.get('big.txt')!.notes.join(' ')).toMatch(/more lines of the diff of big.txt left out/);
      expect(byPath.get(HOSTILE_NAME)?.status).toBe('added');
      // The lines are git's, in order.
      const plain = gitStagedDiff(repo.dir);
      for (const name of ['src/app.ts', 'src/new-name.ts', 'docs/gone.md', HOSTILE_NAME]) {
        expect(byPath.get(name)!.hunks.flatMap((h) => h.lines.filter((l) => l.kind !== '\\').map((l) => `${l.kind}${l.text}`)), name).toEqual(hunkLines(plain, name));
      }
      expect(byPath.get('src/app.ts')!.hunks.flatMap((h) => h.lines.map((l) => l.text))).toEqual(expect.arrayContaining(HOSTILE));
      // Side by side pairs the deleted line with the line that replaced it.
      const rows = byPath.get('src/app.ts')!.hunks.flatMap(sideBySide);
      expect(rows.find((r) => r.left?.text === 'const line 5')?.right?.text).toBe('const line five');
    });
  }

  it('an answer that is not a diff (a file at a revision) is shown as it is', () => {
    expect(parseDiff('No staged changes in app.')).toMatchObject({ files: [], plain: 'No staged changes in app.' });
  });
});
