import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { count, parts, userLine, when } from '../present.js';

export const getMe = githubTool({
  name: 'get_me',
  toolset: 'context',
  description: 'Who the token acts as.',
  input: z.object({}),
  annotations: { title: 'Get me', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'no special permission',
  scope: 'none',
  run: async (_args, { api }) => {
    const { data: me } = await api.rest.users.getAuthenticated();
    return [
      parts(`@${me.login}`, userLine(me.name), me.type, me.site_admin ? 'site admin' : ''),
      parts(userLine(me.company), userLine(me.location), me.email ?? ''),
      userLine(me.bio),
      parts(`${count(me.public_repos)} public repos`, me.total_private_repos !== undefined ? `${count(me.total_private_repos)} private` : '', `${count(me.followers)} followers`, me.plan?.name ? `plan ${me.plan.name}` : ''),
      parts(me.html_url, `joined ${when(me.created_at)}`),
    ]
      .filter(Boolean)
      .join('\n');
  },
});
