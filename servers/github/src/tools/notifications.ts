import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { pageParams } from '../params.js';
import { listing, nextPage, paging, parts, userLine, when } from '../present.js';

export const listNotifications = githubTool({
  name: 'list_notifications',
  toolset: 'notifications',
  description: 'Lists your notifications (unread only unless all).',
  input: z.object({ all: z.boolean().optional(), participating: z.boolean().optional(), since: z.string().optional(), ...pageParams }),
  annotations: { title: 'List notifications', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'none: fine-grained tokens cannot read notifications',
  scope: 'notifications',
  run: async ({ all, participating, since, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.activity.listNotificationsForAuthenticatedUser({
      ...page,
      ...(all !== undefined ? { all } : {}),
      ...(participating !== undefined ? { participating } : {}),
      ...(since ? { since } : {}),
    });
    const lines = data.map((n) => parts(`${n.unread ? '[unread] ' : ''}${n.repository.full_name}: ${n.subject.type} "${userLine(n.subject.title)}"`, n.reason, `updated ${when(n.updated_at)}`, `thread ${n.id}`));
    return listing(`Notifications${all ? '' : ' (unread)'}:`, lines, nextPage(headers.link, page.page));
  },
});
