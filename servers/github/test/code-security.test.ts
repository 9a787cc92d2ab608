import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { LEAKED_SECRET, TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
const repo = { owner: 'acme', repo: 'widgets' };
const NO_ALERTS = 'alice-fine-grained-no-alerts-5e4d';

beforeAll(async () => {
  world = await startWorld();
  world.fake.state.addToken(NO_ALERTS, 'alice', { permissions: { contents: 'read' } });
  const secret = world.fake.state.repo('acme', 'secret')!;
  secret.collaborators.set('alice', 'admin');
  secret.dependabotAlerts = [{ ...world.widgets.dependabotAlerts![0]! }];
  gh = await world.connect();
});
afterAll(() => world.close());

describe('code scanning', () => {
  it('lists alerts with severity, rule, state, tool and location; descriptions sanitised', async () => {
    const out = await gh.callTool('list_code_scanning_alerts', repo);
    expect(out.text).toBe(
      'Code scanning alerts of acme/widgets:\n#1 [high] js/sql-injection: Database query built from user-controlled sources · open · CodeQL · src/index.ts:1\n#2 [note] js/unused-local-variable: Unused variable · dismissed · CodeQL · src/util/math.ts:2',
    );
    const open = await gh.callTool('list_code_scanning_alerts', { ...repo, state: 'open' });
    expect(open.text).not.toContain('#2');
  });

  it('gets one alert with its message and help, hidden content removed', async () => {
    const out = await gh.callTool('get_code_scanning_alert', { ...repo, alert_number: 1 });
    expect(out.text).toContain('Message: This query depends on a user-provided value.');
    expect(out.text).toContain('Help:\nUse a parameterised query.');
    expect(out.text).not.toMatch(/[\u{e0000}-\u{e007f}\u200b]|rm -rf/u);
    const missing = await gh.callTool('get_code_scanning_alert', { ...repo, alert_number: 99 });
    expect(missing).toMatchObject({ isError: true, text: expect.stringMatching(/not found/i) });
  });
});

describe('Dependabot', () => {
  it('lists and gets alerts: package, advisory, affected range, fix', async () => {
    const list = await gh.callTool('list_dependabot_alerts', repo);
    expect(list.text).toBe('Dependabot alerts of acme/widgets:\n#1 [critical] npm/lodash: Prototype pollution in lodash · open · affects < 4.17.12 · fixed in 4.17.12 · package-lock.json');
    const one = await gh.callTool('get_dependabot_alert', { ...repo, alert_number: 1 });
    expect(one.text).toContain('GHSA-jf85-cpcp-j695 · CVE-2019-10744');
    expect(one.text).toContain('Versions of lodash before 4.17.12 are vulnerable.');
    expect(one.text).not.toMatch(/[\u{e0000}-\u{e007f}]/u);
  });

  it("a fine-grained token without the permission: a private repository's alerts are not found (404), an update names the permission (403)", async () => {
    const fine = await world.connect({ token: NO_ALERTS });
    const read = await fine.callTool('list_dependabot_alerts', { owner: 'acme', repo: 'secret' });
    expect(read).toMatchObject({ isError: true, text: expect.stringMatching(/^The repository acme\/secret was not found, or it is private/) });
    const write = await fine.callTool('update_security_alert', { owner: 'acme', repo: 'secret', kind: 'dependabot', alert_number: 1, state: 'dismissed', reason: 'tolerable_risk' });
    expect(write).toMatchObject({ isError: true, text: 'GitHub denied access to acme/secret (403: Resource not accessible by personal access token). The token needs Vulnerability alerts: write on acme/secret.' });
  });
});

describe('secret scanning', () => {
  it('lists and gets alerts without ever showing the secret, and asks GitHub to leave it out', async () => {
    const before = world.fake.requests.length;
    const list = await gh.callTool('list_secret_scanning_alerts', repo);
    expect(list.text).toBe('Secret scanning alerts of acme/widgets:\n#1 GitHub Personal Access Token · open · created 2025-01-01 00:00Z');
    const one = await gh.callTool('get_secret_scanning_alert', { ...repo, alert_number: 1 });
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(LEAKED_SECRET);
      expect(text).not.toContain('leaked');
    }
    const asked = world.fake.requests.slice(before).filter((r) => r.path.includes('/secret-scanning/'));
    expect(asked.map((r) => r.query.get('hide_secret'))).toEqual(['true', 'true']);
  });
});

describe('updating an alert (a write)', () => {
  it('dismisses and reopens, resolves a secret alert; the state must fit the kind', async () => {
    const dismissed = await gh.callTool('update_security_alert', { ...repo, kind: 'code_scanning', alert_number: 1, state: 'dismissed', reason: "won't fix", comment: 'accepted' });
    expect(dismissed.text).toBe("Updated code scanning alert #1 of acme/widgets: dismissed (won't fix).");
    expect(world.widgets.codeScanningAlerts![0]).toMatchObject({ state: 'dismissed', dismissedComment: 'accepted' });
    const reopened = await gh.callTool('update_security_alert', { ...repo, kind: 'code_scanning', alert_number: 1, state: 'open' });
    expect(reopened.text).toBe('Updated code scanning alert #1 of acme/widgets: open.');
    const resolved = await gh.callTool('update_security_alert', { ...repo, kind: 'secret_scanning', alert_number: 1, state: 'resolved', reason: 'revoked' });
    expect(resolved.text).toBe('Updated secret scanning alert #1 of acme/widgets: resolved (revoked).');
    expect(resolved.text).not.toContain(LEAKED_SECRET);
    const wrong = await gh.callTool('update_security_alert', { ...repo, kind: 'dependabot', alert_number: 1, state: 'resolved' });
    expect(wrong).toMatchObject({ isError: true, text: "A dependabot alert's state is open or dismissed, not resolved." });
    const noReason = await gh.callTool('update_security_alert', { ...repo, kind: 'dependabot', alert_number: 1, state: 'dismissed' });
    expect(noReason).toMatchObject({ isError: true, text: expect.stringMatching(/^GitHub rejected the request as invalid: dismissed_reason is required/) });
  });

  it('is not registered in read-only mode, and a read-only token is told the permission', async () => {
    const ro = await world.connect({}, { toolsets: ['code_security'], readOnly: true });
    expect(await ro.toolNames()).not.toContain('update_security_alert');
    const carol = await world.connect({ token: TOKENS.carol });
    const out = await carol.callTool('update_security_alert', { ...repo, kind: 'code_scanning', alert_number: 2, state: 'open' });
    expect(out).toMatchObject({ isError: true, text: expect.stringContaining('The token needs Security events: write on acme/widgets.') });
  });
});
