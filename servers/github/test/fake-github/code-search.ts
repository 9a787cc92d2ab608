import { type Handler, type Router, invalid, paginated } from './http.js';
import type { CodeSearchItem } from './shapes.js';
import type { FakeRepo } from './state.js';
import { inScope, matchesWords, parseQuery } from './search-query.js';
import { minimalRepository } from './repos.js';

/** Code search over the default branch of every visible repository: words in the path or the text. */
const searchCode: Handler = (ctx) => {
  const query = parseQuery(ctx.req.query.get('q') ?? '');
  if (query.words.length === 0) throw invalid('Validation Failed', [{ message: 'Must include at least one search term.', resource: 'Search', field: 'q', code: 'invalid' }]);
  const found: { repo: FakeRepo; path: string; sha: string }[] = [];
  for (const repo of ctx.state.repos.values()) {
    if (repo.private && !ctx.state.permissionOf(repo, ctx.viewer?.login)) continue;
    if (!inScope(query, `${repo.owner}/${repo.name}`)) continue;
    const head = ctx.state.resolve(repo, undefined);
    if (!head) continue;
    for (const [path, sha] of ctx.state.filesAt(repo, head)) {
      const blob = repo.blobs.get(sha)!;
      if (blob.includes(0)) continue;
      if (matchesWords(query.words, [path, blob.toString('utf8')])) found.push({ repo, path, sha });
    }
  }
  return paginated(
    ctx,
    found,
    ({ repo, path, sha }): CodeSearchItem => ({
      name: path.split('/').pop()!,
      path,
      sha,
      url: ctx.api(`/repos/${repo.owner}/${repo.name}/contents/${path}`),
      git_url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/blobs/${sha}`),
      html_url: ctx.web(`/${repo.owner}/${repo.name}/blob/${repo.defaultBranch}/${path}`),
      repository: minimalRepository(ctx, repo),
      score: 1,
    }),
    (items) => ({ total_count: found.length, incomplete_results: false, items }),
  );
};

export function codeSearchRoutes(router: Router): void {
  router.get('/search/code', searchCode);
}
