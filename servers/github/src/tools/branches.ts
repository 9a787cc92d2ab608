import { z } from 'zod';
import { ToolError } from '@suite/shared';
import { httpStatus } from '../github-errors.js';
import { githubTool } from '../github-tool.js';
import type { GitRef } from '../github-types.js';
import { fullName, pageParams, repoParams } from '../params.js';
import { listing, nextPage, paging } from '../present.js';
import { branchField, branchRef } from '../repo-paths.js';

export const createBranch = githubTool({
  name: 'create_branch',
  toolset: 'repos',
  description: 'Creates a branch.',
  input: z.object({ ...repoParams, branch: branchField, from_branch: branchField.optional() }),
  annotations: { title: 'Create branch', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Contents: write',
  run: async ({ owner, repo, branch, from_branch }, call) => {
    const from = from_branch ?? (await call.defaultBranch(owner, repo));
    const { data } = await call.api.request(`GET /repos/{owner}/{repo}/git/ref/${branchRef(from)}`, { owner, repo });
    const sha = (data as GitRef).object.sha;
    try {
      await call.api.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha });
    } catch (error) {
      if (httpStatus(error) === 422) throw ToolError.conflict(`The branch ${branch} already exists in ${fullName(owner, repo)} (or its name collides with one). Pick another name.`);
      throw error;
    }
    return `Created ${branch} in ${fullName(owner, repo)} from ${from} at ${sha.slice(0, 7)}.`;
  },
});

export const listBranches = githubTool({
  name: 'list_branches',
  toolset: 'repos',
  description: 'Lists branches.',
  input: z.object({ ...repoParams, ...pageParams }),
  annotations: { title: 'List branches', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.repos.listBranches({ owner: args.owner, repo: args.repo, ...page });
    const lines = data.map((b) => `${b.name} ${b.commit.sha.slice(0, 7)}${b.protected ? ' (protected)' : ''}`);
    return listing(`Branches of ${fullName(args.owner, args.repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

export const listTags = githubTool({
  name: 'list_tags',
  toolset: 'repos',
  description: 'Lists tags.',
  input: z.object({ ...repoParams, ...pageParams }),
  annotations: { title: 'List tags', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.repos.listTags({ owner: args.owner, repo: args.repo, ...page });
    const lines = data.map((t) => `${t.name} ${t.commit.sha.slice(0, 7)}`);
    return listing(`Tags of ${fullName(args.owner, args.repo)}:`, lines, nextPage(headers.link, page.page));
  },
});
