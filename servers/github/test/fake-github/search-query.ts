/** A GitHub search query taken apart: qualifiers (key:value, -key:value) and plain words. */
export interface SearchQuery {
  words: string[];
  qualifiers: { key: string; value: string; negated: boolean }[];
}

export function parseQuery(q: string): SearchQuery {
  const tokens = q.match(/-?[a-z_-]+:"[^"]*"|"[^"]*"|\S+/gi) ?? [];
  const query: SearchQuery = { words: [], qualifiers: [] };
  for (const token of tokens) {
    const m = /^(-?)([a-z_-]+):(.+)$/i.exec(token);
    if (m) query.qualifiers.push({ key: m[2]!.toLowerCase(), value: m[3]!.replace(/^"|"$/g, ''), negated: m[1] === '-' });
    else query.words.push(token.replace(/^"|"$/g, '').toLowerCase());
  }
  return query;
}

/** Every word appears in one of the texts (case-insensitive). */
export function matchesWords(words: string[], texts: string[]): boolean {
  const haystack = texts.join('\n').toLowerCase();
  return words.every((w) => haystack.includes(w));
}

/**
 * Whether a repository passes the query's scope qualifiers: repo:, user:, org: and owner: are ORed
 * among themselves (as on GitHub), exclusions remove.
 */
export function inScope(query: SearchQuery, fullName: string): boolean {
  const [owner = ''] = fullName.split('/');
  const matches = (q: { key: string; value: string }): boolean =>
    q.key === 'repo' ? q.value.toLowerCase() === fullName.toLowerCase() : q.value.toLowerCase() === owner.toLowerCase();
  const scopes = query.qualifiers.filter((q) => ['repo', 'user', 'org', 'owner'].includes(q.key));
  if (scopes.filter((q) => q.negated).some(matches)) return false;
  const positive = scopes.filter((q) => !q.negated);
  return positive.length === 0 || positive.some(matches);
}
