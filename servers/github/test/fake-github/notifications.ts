import { type Handler, type Router, paginated } from './http.js';
import type { Thread } from './shapes.js';
import { minimalRepository } from './repos.js';
import { requireViewer } from './users.js';

const listNotifications: Handler = (ctx) => {
  const viewer = requireViewer(ctx);
  const all = ctx.req.query.get('all') === 'true';
  const since = ctx.req.query.get('since');
  const found = ctx.state.notifications
    .filter((n) => n.recipient.toLowerCase() === viewer.login.toLowerCase())
    .filter((n) => all || n.unread)
    .filter((n) => !since || n.updatedAt >= since)
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return paginated(ctx, found, (n): Thread => {
    const [owner = '', name = ''] = n.repo.split('/');
    const repo = ctx.state.repo(owner, name)!;
    return {
      id: n.id,
      repository: minimalRepository(ctx, repo),
      subject: { title: n.title, url: ctx.api(`/repos/${n.repo}/issues/1`), latest_comment_url: ctx.api(`/repos/${n.repo}/issues/comments/1`), type: n.type },
      reason: n.reason,
      unread: n.unread,
      updated_at: n.updatedAt,
      last_read_at: null,
      url: ctx.api(`/notifications/threads/${n.id}`),
      subscription_url: ctx.api(`/notifications/threads/${n.id}/subscription`),
    };
  });
};

export function notificationRoutes(router: Router): void {
  router.get('/notifications', listNotifications);
}
