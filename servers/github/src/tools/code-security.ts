import { z } from 'zod';
import { ToolError } from '@suite/shared';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, positiveInt, repoParams, text } from '../params.js';
import { listing, nextPage, paging, parts, userLine, userText, when } from '../present.js';

/**
 * Code scanning, Dependabot and secret scanning alerts. Everything GitHub says about an alert
 * (rule descriptions, messages, advisory summaries) is text others wrote and passes the sanitiser;
 * a secret scanning alert's `secret` (the leaked value itself) is never read into an answer.
 */

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'warning', 'note', 'error'] as const;

type CodeAlert = {
  number: number;
  state?: string | null;
  dismissed_reason?: string | null;
  rule?: { id?: string | null; severity?: string | null; security_severity_level?: string | null; description?: string | null; full_description?: string | null; help?: string | null } | null;
  tool?: { name?: string | null } | null;
  most_recent_instance?: { ref?: string | null; location?: { path?: string | null; start_line?: number | null; end_line?: number | null } | null; message?: { text?: string | null } | null } | null;
  html_url?: string;
  created_at?: string;
};

function codeLine(a: CodeAlert): string {
  const where = a.most_recent_instance?.location;
  const location = where?.path ? `${userLine(where.path)}${where.start_line ? `:${where.start_line}` : ''}` : '';
  const severity = a.rule?.security_severity_level ?? a.rule?.severity ?? '';
  return parts(`#${a.number} [${severity}] ${userLine(a.rule?.id)}: ${userLine(a.rule?.description)}`, a.state ?? '', userLine(a.tool?.name), location);
}

export const listCodeScanningAlerts = githubTool({
  name: 'list_code_scanning_alerts',
  toolset: 'code_security',
  description: 'Code scanning alerts of a repository: number, severity, rule, state, tool and location.',
  input: z.object({
    ...repoParams,
    state: z.enum(['open', 'dismissed', 'fixed']).optional(),
    severity: z.enum(SEVERITIES).optional(),
    ref: text.optional(),
    tool_name: text.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List code scanning alerts', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Code scanning alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, state, severity, ref, tool_name, ...rest }, { api }) => {
    const page = paging(rest);
    const filters = { ...(state ? { state } : {}), ...(severity ? { severity } : {}), ...(ref ? { ref } : {}), ...(tool_name ? { tool_name } : {}) };
    const { data, headers } = await api.rest.codeScanning.listAlertsForRepo({ owner, repo, ...page, ...filters });
    return listing(`Code scanning alerts of ${fullName(owner, repo)}${state ? ` (${state})` : ''}:`, (data as CodeAlert[]).map(codeLine), nextPage(headers.link, page.page));
  },
});

export const getCodeScanningAlert = githubTool({
  name: 'get_code_scanning_alert',
  toolset: 'code_security',
  description: 'One code scanning alert: rule, severity, state, location, message and the rule\'s help.',
  input: z.object({ ...repoParams, alert_number: positiveInt }),
  annotations: { title: 'Get code scanning alert', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Code scanning alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, alert_number }, { api, config }) => {
    const { data } = await api.rest.codeScanning.getAlert({ owner, repo, alert_number });
    const a = data as CodeAlert;
    const max = config.limits.maxTextChars;
    return [
      codeLine(a),
      parts(a.dismissed_reason ? `dismissed: ${a.dismissed_reason}` : '', a.most_recent_instance?.ref ? `ref ${userLine(a.most_recent_instance.ref)}` : '', `created ${when(a.created_at)}`),
      `Message: ${userText(a.most_recent_instance?.message?.text, max)}`,
      `Rule: ${userText(a.rule?.full_description ?? a.rule?.description, max)}`,
      a.rule?.help ? `Help:\n${userText(a.rule.help, max)}` : '',
      a.html_url ?? '',
    ]
      .filter(Boolean)
      .join('\n');
  },
});

type DependabotAlert = {
  number: number;
  state?: string | null;
  dismissed_reason?: string | null;
  dependency?: { package?: { ecosystem?: string | null; name?: string | null } | null; manifest_path?: string | null; scope?: string | null } | null;
  security_advisory?: { ghsa_id?: string | null; cve_id?: string | null; summary?: string | null; description?: string | null; severity?: string | null } | null;
  security_vulnerability?: { vulnerable_version_range?: string | null; first_patched_version?: { identifier?: string | null } | null } | null;
  html_url?: string;
  created_at?: string;
};

function dependabotLine(a: DependabotAlert): string {
  const pkg = a.dependency?.package;
  const fix = a.security_vulnerability?.first_patched_version?.identifier;
  return parts(
    `#${a.number} [${a.security_advisory?.severity ?? ''}] ${userLine(pkg?.ecosystem)}/${userLine(pkg?.name)}: ${userLine(a.security_advisory?.summary)}`,
    a.state ?? '',
    a.security_vulnerability?.vulnerable_version_range ? `affects ${userLine(a.security_vulnerability.vulnerable_version_range)}` : '',
    fix ? `fixed in ${userLine(fix)}` : 'no fix yet',
    userLine(a.dependency?.manifest_path),
  );
}

export const listDependabotAlerts = githubTool({
  name: 'list_dependabot_alerts',
  toolset: 'code_security',
  description: 'Dependabot alerts of a repository: package, advisory, severity, state and the first fixed version.',
  input: z.object({
    ...repoParams,
    state: z.enum(['open', 'dismissed', 'fixed', 'auto_dismissed']).optional(),
    severity: z.enum(['critical', 'high', 'medium', 'low']).optional(),
    ecosystem: text.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List Dependabot alerts', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Dependabot alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, state, severity, ecosystem, ...rest }, { api }) => {
    const page = paging(rest);
    const filters = { ...(state ? { state } : {}), ...(severity ? { severity } : {}), ...(ecosystem ? { ecosystem } : {}) };
    // Dependabot pages by cursor, yet still takes page and per_page on the repository endpoint.
    const { data, headers } = await api.rest.dependabot.listAlertsForRepo({ owner, repo, ...page, ...filters });
    return listing(`Dependabot alerts of ${fullName(owner, repo)}${state ? ` (${state})` : ''}:`, (data as DependabotAlert[]).map(dependabotLine), nextPage(headers.link, page.page));
  },
});

export const getDependabotAlert = githubTool({
  name: 'get_dependabot_alert',
  toolset: 'code_security',
  description: 'One Dependabot alert: package, advisory (GHSA, CVE, description), affected range and fix.',
  input: z.object({ ...repoParams, alert_number: positiveInt }),
  annotations: { title: 'Get Dependabot alert', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Dependabot alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, alert_number }, { api, config }) => {
    const { data } = await api.rest.dependabot.getAlert({ owner, repo, alert_number });
    const a = data as DependabotAlert;
    return [
      dependabotLine(a),
      parts(a.security_advisory?.ghsa_id ? userLine(a.security_advisory.ghsa_id) : '', a.security_advisory?.cve_id ? userLine(a.security_advisory.cve_id) : '', a.dismissed_reason ? `dismissed: ${a.dismissed_reason}` : '', `created ${when(a.created_at)}`),
      userText(a.security_advisory?.description, config.limits.maxTextChars),
      a.html_url ?? '',
    ]
      .filter(Boolean)
      .join('\n');
  },
});

/** What a secret scanning alert shows: never the `secret` field, which holds the leaked value. */
type SecretAlert = {
  number: number;
  state?: string | null;
  secret_type?: string | null;
  secret_type_display_name?: string | null;
  resolution?: string | null;
  resolution_comment?: string | null;
  validity?: string | null;
  push_protection_bypassed?: boolean | null;
  html_url?: string;
  created_at?: string | null;
};

function secretLine(a: SecretAlert): string {
  return parts(
    `#${a.number} ${userLine(a.secret_type_display_name ?? a.secret_type)}`,
    a.state ?? '',
    a.resolution ? `resolved as ${a.resolution}` : '',
    a.validity && a.validity !== 'unknown' ? `validity ${a.validity}` : '',
    a.push_protection_bypassed ? 'push protection bypassed' : '',
    `created ${when(a.created_at)}`,
  );
}

export const listSecretScanningAlerts = githubTool({
  name: 'list_secret_scanning_alerts',
  toolset: 'code_security',
  description: 'Secret scanning alerts of a repository: number, secret type, state and resolution (never the secret itself).',
  input: z.object({
    ...repoParams,
    state: z.enum(['open', 'resolved']).optional(),
    secret_type: text.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List secret scanning alerts', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Secret scanning alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, state, secret_type, ...rest }, { api }) => {
    const page = paging(rest);
    // hide_secret: GitHub leaves the value out of its answer too, so it never crosses the wire.
    const { data, headers } = await api.rest.secretScanning.listAlertsForRepo({ owner, repo, ...page, ...(state ? { state } : {}), ...(secret_type ? { secret_type } : {}), hide_secret: true });
    return listing(`Secret scanning alerts of ${fullName(owner, repo)}${state ? ` (${state})` : ''}:`, (data as SecretAlert[]).map(secretLine), nextPage(headers.link, page.page));
  },
});

export const getSecretScanningAlert = githubTool({
  name: 'get_secret_scanning_alert',
  toolset: 'code_security',
  description: 'One secret scanning alert: secret type, state, resolution and its comment (never the secret itself).',
  input: z.object({ ...repoParams, alert_number: positiveInt }),
  annotations: { title: 'Get secret scanning alert', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Secret scanning alerts: read',
  scope: 'security_events',
  run: async ({ owner, repo, alert_number }, { api, config }) => {
    const { data } = await api.rest.secretScanning.getAlert({ owner, repo, alert_number, hide_secret: true });
    const a = data as SecretAlert;
    return [secretLine(a), a.resolution_comment ? `Comment: ${userText(a.resolution_comment, config.limits.maxTextChars)}` : '', a.html_url ?? ''].filter(Boolean).join('\n');
  },
});

export const updateSecurityAlert = githubTool({
  name: 'update_security_alert',
  toolset: 'code_security',
  description:
    "Opens, dismisses or resolves an alert. code_scanning and dependabot: state open or dismissed (reason required to dismiss); secret_scanning: open or resolved (reason required to resolve).",
  input: z.object({
    ...repoParams,
    kind: z.enum(['code_scanning', 'dependabot', 'secret_scanning']),
    alert_number: positiveInt,
    state: z.enum(['open', 'dismissed', 'resolved']),
    reason: text.optional(),
    comment: z.string().optional(),
  }),
  annotations: { title: 'Update security alert', readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  permission: 'Code scanning alerts, Dependabot alerts or Secret scanning alerts: write',
  scope: 'security_events',
  run: async ({ owner, repo, kind, alert_number, state, reason, comment }, { api }) => {
    const closing = state !== 'open';
    const valid = kind === 'secret_scanning' ? ['open', 'resolved'] : ['open', 'dismissed'];
    if (!valid.includes(state)) throw ToolError.invalidArgument(`A ${kind.replace('_', ' ')} alert's state is ${valid.join(' or ')}, not ${state}.`);
    const name = `${kind.replace('_', ' ')} alert #${alert_number} of ${fullName(owner, repo)}`;
    if (kind === 'code_scanning') {
      const { data } = await api.rest.codeScanning.updateAlert({
        owner,
        repo,
        alert_number,
        state: state as 'open' | 'dismissed',
        ...(closing && reason ? { dismissed_reason: reason as 'false positive' | "won't fix" | 'used in tests' } : {}),
        ...(closing && comment ? { dismissed_comment: comment } : {}),
      });
      return `Updated ${name}: ${data.state}${data.dismissed_reason ? ` (${data.dismissed_reason})` : ''}.`;
    }
    if (kind === 'dependabot') {
      const { data } = await api.rest.dependabot.updateAlert({
        owner,
        repo,
        alert_number,
        state: state as 'open' | 'dismissed',
        ...(closing && reason ? { dismissed_reason: reason as 'fix_started' | 'inaccurate' | 'no_bandwidth' | 'not_used' | 'tolerable_risk' } : {}),
        ...(closing && comment ? { dismissed_comment: comment } : {}),
      });
      return `Updated ${name}: ${data.state}${data.dismissed_reason ? ` (${data.dismissed_reason})` : ''}.`;
    }
    const { data } = await api.rest.secretScanning.updateAlert({
      owner,
      repo,
      alert_number,
      state: state as 'open' | 'resolved',
      ...(closing && reason ? { resolution: reason as 'false_positive' | 'wont_fix' | 'revoked' | 'used_in_tests' } : {}),
      ...(closing && comment ? { resolution_comment: comment } : {}),
    });
    return `Updated ${name}: ${data.state}${data.resolution ? ` (${data.resolution})` : ''}.`;
  },
});
