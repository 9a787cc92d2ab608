import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

/**
 * A remote URL as it may be shown: a password or token in its user part (`https://user:token@host`)
 * is never shown, nor is the user part of a URL with a scheme (often a token alone). scp-like
 * addresses (`git@host:path`) keep their user name, which is no secret.
 */
export function redactUrl(url: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*@)(.*)$/s.exec(url);
  if (scheme) return `${scheme[1]}***@${scheme[3]}`;
  return url;
}

const input = z.object({ repo_path: repoPath });
const remote = z.object({ name: z.string(), fetch: z.array(z.string()), push: z.array(z.string()) });
const output = z.object({ repository: z.string(), remotes: z.array(remote) });

export function gitRemoteList(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_remote_list',
    toolset: 'inspect',
    description: 'Lists the remotes of the repository with their fetch and push URLs, as configured (credentials in a URL are never shown). Contacts no remote.',
    input,
    output,
    annotations: { title: 'List remotes', ...READ_ONLY },
    handler: async ({ repo_path }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const result = await repo.run(['config', '-z', '--get-regexp', '^remote\\..*\\.(url|pushurl)$'], { signal: ctx.signal, okExitCodes: [0, 1] });
      if (!result.ok) throw repo.failure(result, 'Listing remotes');
      const remotes = new Map<string, { name: string; fetch: string[]; push: string[] }>();
      for (const item of result.stdout.split('\0')) {
        const newline = item.indexOf('\n');
        if (newline === -1) continue;
        const key = item.slice(0, newline);
        const m = /^remote\.(.+)\.(url|pushurl)$/i.exec(key);
        if (!m) continue;
        const entry = remotes.get(m[1]!) ?? { name: m[1]!, fetch: [], push: [] };
        remotes.set(m[1]!, entry);
        (m[2]!.toLowerCase() === 'url' ? entry.fetch : entry.push).push(redactUrl(item.slice(newline + 1)));
      }
      const list = [...remotes.values()].map((r) => ({ ...r, push: r.push.length > 0 ? r.push : r.fetch }));
      const text = list.length === 0 ? `${repo.name} has no remotes.` : list.flatMap((r) => [...r.fetch.map((u) => `${r.name}\t${u} (fetch)`), ...r.push.map((u) => `${r.name}\t${u} (push)`)]).join('\n');
      return { text, structured: { repository: repo.name, remotes: list } };
    },
  };
}
