import { type Handler, HttpFailure, type RouteContext, type Router, body, json, notFound, paginated, repoFor, str } from './http.js';
import type { FakeCodeScanningAlert, FakeDependabotAlert, FakeRepo, FakeSecretScanningAlert } from './state.js';

/**
 * Code scanning, Dependabot and secret scanning alerts, each behind its own fine-grained
 * permission (security_events, vulnerability_alerts, secret_scanning_alerts): without it, a private
 * repository's alerts are a 404 and an update a 403 naming the permission. A secret scanning alert
 * carries its secret's value unless the request asks for hide_secret, as on GitHub.
 */

const CODE_PERMISSION = 'security_events';
const DEPENDABOT_PERMISSION = 'vulnerability_alerts';
const SECRET_PERMISSION = 'secret_scanning_alerts';

function alertNumber(ctx: RouteContext): number {
  return Number(ctx.req.params.number);
}

function codeShape(ctx: RouteContext, repo: FakeRepo, a: FakeCodeScanningAlert): unknown {
  return {
    number: a.number,
    created_at: '2025-01-01T00:00:00Z',
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/code-scanning/alerts/${a.number}`),
    html_url: ctx.web(`/${repo.owner}/${repo.name}/security/code-scanning/${a.number}`),
    state: a.state,
    dismissed_by: null,
    dismissed_at: null,
    dismissed_reason: a.dismissedReason,
    dismissed_comment: a.dismissedComment,
    rule: { id: a.ruleId, severity: a.severity, security_severity_level: a.securitySeverity, description: a.description, full_description: a.description, help: a.help, tags: ['security'] },
    tool: { name: a.tool, guid: null, version: '2.20.0' },
    most_recent_instance: { ref: `refs/heads/${repo.defaultBranch}`, state: a.state, location: { path: a.path, start_line: a.line, end_line: a.line, start_column: 1, end_column: 10 }, message: { text: a.message } },
  };
}

function dependabotShape(ctx: RouteContext, repo: FakeRepo, a: FakeDependabotAlert): unknown {
  return {
    number: a.number,
    state: a.state,
    dependency: { package: { ecosystem: a.ecosystem, name: a.name }, manifest_path: a.manifest, scope: 'runtime' },
    security_advisory: { ghsa_id: a.ghsa, cve_id: a.cve, summary: a.summary, description: a.description, severity: a.severity },
    security_vulnerability: { package: { ecosystem: a.ecosystem, name: a.name }, severity: a.severity, vulnerable_version_range: a.range, first_patched_version: a.patched ? { identifier: a.patched } : null },
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/dependabot/alerts/${a.number}`),
    html_url: ctx.web(`/${repo.owner}/${repo.name}/security/dependabot/${a.number}`),
    created_at: '2025-01-01T00:00:00Z',
    dismissed_reason: a.dismissedReason,
  };
}

function secretShape(ctx: RouteContext, repo: FakeRepo, a: FakeSecretScanningAlert): unknown {
  const hide = ctx.req.query.get('hide_secret') === 'true';
  return {
    number: a.number,
    created_at: '2025-01-01T00:00:00Z',
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/secret-scanning/alerts/${a.number}`),
    html_url: ctx.web(`/${repo.owner}/${repo.name}/security/secret-scanning/${a.number}`),
    state: a.state,
    resolution: a.resolution,
    resolution_comment: a.resolutionComment,
    secret_type: a.secretType,
    secret_type_display_name: a.displayName,
    ...(hide ? {} : { secret: a.secret }),
    validity: 'unknown',
    push_protection_bypassed: false,
  };
}

function byState<T extends { state: string }>(ctx: RouteContext, alerts: readonly T[]): T[] {
  const state = ctx.req.query.get('state');
  return alerts.filter((a) => !state || a.state === state);
}

function found<T extends { number: number }>(ctx: RouteContext, alerts: readonly T[] | undefined): T {
  const alert = (alerts ?? []).find((a) => a.number === alertNumber(ctx));
  if (!alert) throw notFound();
  return alert;
}

const listCode: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', CODE_PERMISSION);
  const severity = ctx.req.query.get('severity');
  const alerts = byState(ctx, repo.codeScanningAlerts ?? []).filter((a) => !severity || a.securitySeverity === severity || a.severity === severity);
  return paginated(ctx, alerts, (a) => codeShape(ctx, repo, a));
};
const getCode: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', CODE_PERMISSION);
  return json(codeShape(ctx, repo, found(ctx, repo.codeScanningAlerts)));
};
const updateCode: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write', CODE_PERMISSION);
  const alert = found(ctx, repo.codeScanningAlerts);
  const b = body(ctx);
  const state = str(b.state);
  if (state !== 'open' && state !== 'dismissed') throw new HttpFailure(422, 'Invalid state');
  if (state === 'dismissed' && !str(b.dismissed_reason)) throw new HttpFailure(422, 'A dismissed_reason is required when dismissing an alert');
  alert.state = state;
  alert.dismissedReason = state === 'dismissed' ? (str(b.dismissed_reason) ?? null) : null;
  alert.dismissedComment = state === 'dismissed' ? (str(b.dismissed_comment) ?? null) : null;
  return json(codeShape(ctx, repo, alert));
};

const listDependabot: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', DEPENDABOT_PERMISSION);
  const severity = ctx.req.query.get('severity');
  const alerts = byState(ctx, repo.dependabotAlerts ?? []).filter((a) => !severity || a.severity === severity);
  return paginated(ctx, alerts, (a) => dependabotShape(ctx, repo, a));
};
const getDependabot: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', DEPENDABOT_PERMISSION);
  return json(dependabotShape(ctx, repo, found(ctx, repo.dependabotAlerts)));
};
const updateDependabot: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write', DEPENDABOT_PERMISSION);
  const alert = found(ctx, repo.dependabotAlerts);
  const b = body(ctx);
  const state = str(b.state);
  if (state !== 'open' && state !== 'dismissed') throw new HttpFailure(422, 'Invalid state');
  if (state === 'dismissed' && !str(b.dismissed_reason)) throw new HttpFailure(422, 'dismissed_reason is required when state is dismissed');
  alert.state = state;
  alert.dismissedReason = state === 'dismissed' ? (str(b.dismissed_reason) ?? null) : null;
  return json(dependabotShape(ctx, repo, alert));
};

const listSecrets: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', SECRET_PERMISSION);
  return paginated(ctx, byState(ctx, repo.secretScanningAlerts ?? []), (a) => secretShape(ctx, repo, a));
};
const getSecret: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', SECRET_PERMISSION);
  return json(secretShape(ctx, repo, found(ctx, repo.secretScanningAlerts)));
};
const updateSecret: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write', SECRET_PERMISSION);
  const alert = found(ctx, repo.secretScanningAlerts);
  const b = body(ctx);
  const state = str(b.state);
  if (state !== 'open' && state !== 'resolved') throw new HttpFailure(422, 'Invalid state');
  if (state === 'resolved' && !str(b.resolution)) throw new HttpFailure(422, 'A resolution is required when resolving an alert');
  alert.state = state;
  alert.resolution = state === 'resolved' ? (str(b.resolution) ?? null) : null;
  alert.resolutionComment = state === 'resolved' ? (str(b.resolution_comment) ?? null) : null;
  return json(secretShape(ctx, repo, alert));
};

export function securityRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/code-scanning/alerts', listCode);
  router.get('/repos/:owner/:repo/code-scanning/alerts/:number', getCode);
  router.patch('/repos/:owner/:repo/code-scanning/alerts/:number', updateCode);
  router.get('/repos/:owner/:repo/dependabot/alerts', listDependabot);
  router.get('/repos/:owner/:repo/dependabot/alerts/:number', getDependabot);
  router.patch('/repos/:owner/:repo/dependabot/alerts/:number', updateDependabot);
  router.get('/repos/:owner/:repo/secret-scanning/alerts', listSecrets);
  router.get('/repos/:owner/:repo/secret-scanning/alerts/:number', getSecret);
  router.patch('/repos/:owner/:repo/secret-scanning/alerts/:number', updateSecret);
}
