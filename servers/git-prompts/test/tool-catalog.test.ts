import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, toolCatalog, type TestSession } from '@suite/test-kit';
import { makeRepo, open } from './helpers.js';

// Every tool's name, schemas and annotations as clients see them, in both modes. A change shows up
// in review as a snapshot diff; update deliberately with `vitest run -u`.
describe('tool catalog', () => {
  let session: TestSession | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await session?.close();
    await cleanup?.();
    session = undefined;
  });

  for (const allowWrite of [false, true]) {
    it(`matches the snapshot${allowWrite ? ' (--allow-write)' : ''}`, async () => {
      const temp = await makeTempDir();
      cleanup = temp.cleanup;
      session = await open([makeRepo(path.join(temp.dir, 'app'))], { allowWrite });
      await expect(await toolCatalog(session.client)).toMatchFileSnapshot(`./__snapshots__/tools${allowWrite ? '.allow-write' : ''}.json`);
    });
  }

  it('names and arguments match the official git server, with honest annotations', async () => {
    const temp = await makeTempDir();
    cleanup = temp.cleanup;
    session = await open([makeRepo(path.join(temp.dir, 'app'))], { allowWrite: true });
    const { tools } = await session.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const official: Record<string, string[]> = {
      git_status: ['repo_path'],
      git_diff_unstaged: ['repo_path', 'context_lines'],
      git_diff_staged: ['repo_path', 'context_lines'],
      git_diff: ['repo_path', 'target', 'context_lines'],
      git_commit: ['repo_path', 'message'],
      git_add: ['repo_path', 'files'],
      git_reset: ['repo_path'],
      git_log: ['repo_path', 'max_count', 'start_timestamp', 'end_timestamp'],
      git_create_branch: ['repo_path', 'branch_name', 'base_branch'],
      git_checkout: ['repo_path', 'branch_name'],
      git_show: ['repo_path', 'revision'],
      git_branch: ['repo_path', 'branch_type', 'contains', 'not_contains'],
    };
    for (const [name, args] of Object.entries(official)) {
      const tool = byName.get(name);
      expect(tool, name).toBeDefined();
      const properties = Object.keys((tool!.inputSchema as { properties: Record<string, unknown> }).properties);
      for (const arg of args) expect(properties, `${name}.${arg}`).toContain(arg);
      // repo_path is optional here (one repository needs no naming); nothing the official server lacks is required.
      const required = (tool!.inputSchema as { required?: string[] }).required ?? [];
      for (const r of required) expect(args, `${name} requires ${r}`).toContain(r);
      expect(tool!.annotations?.readOnlyHint, name).toBe(!['git_commit', 'git_add', 'git_reset', 'git_create_branch', 'git_checkout'].includes(name));
    }
    expect(byName.get('git_reset')!.annotations?.destructiveHint).toBe(true);
    expect(byName.get('git_checkout')!.annotations?.destructiveHint).toBe(false);
    // Only draft_commit_message reaches outside the repository (the client's model writes its answer,
    // differently each time); every git tool stays on this machine.
    expect(tools.filter((t) => t.annotations?.openWorldHint !== false).map((t) => t.name)).toEqual(['draft_commit_message']);
    expect(byName.get('draft_commit_message')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true });
  });
});
