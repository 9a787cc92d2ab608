import { expect } from 'vitest';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { connectInProcess } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { startFakeGithub } from './fake-github/index.js';
import { BIN, TOKENS, seed, testConfig } from './helpers.js';

const BODY = 'Filed by the abuse kit. '.repeat(200);

/**
 * The GitHub server, every toolset on (writes included), against the fake GitHub on 127.0.0.1:
 * writes land in the fake's memory. The fuzzer calls it in the process, with the request spacing
 * of the bin (1 s between writes, 2 s between searches, on purpose for GitHub's secondary rate
 * limits) shrunk to nothing; the abuse kit runs the bin.
 */
export const target: ConformanceTarget = {
  name: 'github',
  bin: BIN,
  async prepare() {
    const fake = await startFakeGithub();
    const { widgets } = seed(fake);
    const head = widgets.refs.get('heads/feature/login')!;
    return {
      args: ['--toolsets', 'all'],
      env: {
        GITHUB_API_URL: fake.apiUrl,
        GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice,
        GITHUB_TOKEN: undefined,
        GITHUB_HOST: undefined,
        GITHUB_TOOLSETS: undefined,
        GITHUB_TOOLS: undefined,
        GITHUB_READ_ONLY: undefined,
        GITHUB_DYNAMIC_TOOLSETS: undefined,
        GITHUB_REPOS: undefined,
        GITHUB_LOCKDOWN_MODE: undefined,
      },
      cheapCall: { name: 'get_me', arguments: {} },
      allowedPaths: [],
      secrets: Object.values(TOKENS),
      http: { auth: 'per-session', token: TOKENS.alice },
      samples: [
        'acme', 'widgets', 'alice', 'bob', 'mallory', 'gadgets', 'private-notes', 'secret', 'tools', 'trunk', 'feature/login', 'v1.0.0', 'v0.9.0', head,
        'README.md', 'src/index.ts', 'src/util/math.ts', 'docs/a b#c%d.md', 'data/big.txt', 'assets/logo.png', 'docs/hidden.md', 'src', 'docs/',
        'bug', 'enhancement', 'is:open', 'repo:acme/widgets', 'widget language:TypeScript', 'user:alice', 'ci.yml', 'open', 'closed', 'all', 'MERGE', 'squash',
      ],
      namedSamples: {
        owner: ['acme', 'alice', 'mallory', 'acme'],
        repo: ['widgets', 'widgets', 'gadgets', 'tools', 'secret', 'private-notes'],
        organization: ['acme'],
        path: ['README.md', 'src/index.ts', 'src', 'docs/a b#c%d.md', 'data/big.txt', 'assets/logo.png', 'docs/hidden.md', 'new/file.md'],
        branch: ['trunk', 'feature/login', 'new-branch'],
        from_branch: ['trunk', 'feature/login'],
        base: ['trunk'],
        head: ['feature/login', 'trunk'],
        ref: ['trunk', 'v1.0.0', head],
        sha: [head, 'trunk', 'v1.0.0', head.slice(0, 7)],
        expected_head_sha: [head],
        issue_number: [1, 2, 3, 4],
        pull_number: [3],
        run_id: [9001],
        job_id: [501, 502],
        workflow_id: [77, 'ci.yml'],
        labels: ['bug', 'enhancement'],
        assignees: ['alice', 'bob'],
        query: ['widget', 'crash repo:acme/widgets', 'login is:open', 'alice', 'add'],
        since: ['2024-01-01T00:00:00Z'],
      },
      inFlight: {
        // Writes, spaced a second apart by the bin: the signal comes while most are still queued.
        calls: Array.from({ length: 5 }, (_, i) => ({ name: 'create_issue', arguments: { owner: 'acme', repo: 'widgets', title: `abuse-kit ${i}`, body: BODY } })),
        directories: [],
        async check(answered) {
          const filed = widgets.issues.filter((issue) => issue.title.startsWith('abuse-kit '));
          // Each issue arrived whole; each reported one exists.
          for (const issue of filed) expect(issue.body).toBe(BODY);
          expect(filed.length).toBeGreaterThanOrEqual(answered.filter((a) => a?.result && a.result.isError !== true).length);
        },
      },
      fuzz: {
        numRuns: 200,
        connect: () => connectInProcess(buildServer(testConfig(fake), { toolsets: ['all'] })),
      },
      cleanup: () => fake.close(),
    };
  },
};
