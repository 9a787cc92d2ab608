import { UriTemplate } from '@modelcontextprotocol/server';

/**
 * Matches URIs against an RFC 6570 template, with query expressions (`{?level,since}`) optional as
 * they are in practice: `logs://file/app.log`, `logs://file/app.log?level=error` and
 * `...?since=1h&level=error` all match `logs://file/{+path}{?level,since}`. (The SDK's matcher wants
 * every query variable, in order, or it does not match at all.) Values come back as they stand in
 * the URI, still percent-encoded: the server decodes every variable once, whatever its kind.
 */
export class TemplateMatcher {
  private readonly base: UriTemplate;
  private readonly queryNames: readonly string[] | undefined;

  constructor(template: string) {
    const query = /\{\?([^}]+)\}$/.exec(template);
    this.queryNames = query ? query[1]!.split(',').map((name) => name.trim().replace(/\*$/, '')) : undefined;
    this.base = new UriTemplate(query ? template.slice(0, query.index) : template);
  }

  match(uri: string): Record<string, string> | undefined {
    if (!this.queryNames) return flatten(this.base.match(uri));
    const mark = uri.indexOf('?');
    const variables = flatten(this.base.match(mark === -1 ? uri : uri.slice(0, mark)));
    if (!variables || mark === -1) return variables;
    for (const pair of uri.slice(mark + 1).split('&')) {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      // Unknown parameters are ignored, as a web server would; the first of a repeated one wins.
      if (this.queryNames.includes(name) && !(name in variables)) variables[name] = equals === -1 ? '' : pair.slice(equals + 1);
    }
    return variables;
  }
}

function flatten(match: Record<string, string | string[]> | null): Record<string, string> | undefined {
  if (!match) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(match)) out[key] = Array.isArray(value) ? value.join('/') : String(value);
  return out;
}
