import { appendFileSync, chmodSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { git, makeRepo, open, writeFiles } from './helpers.js';

/**
 * Commit identity and signing (issue 29): an author only with --allow-author; a repository that asks
 * for signed commits gets them only with --allow-signing, always with the user's own signing program,
 * and otherwise the answer says the commit is unsigned.
 */
describe('commit identity and signing', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  let marker: string;

  beforeAll(async () => {
    const made = await makeTempDir('git-prompts-identity-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    marker = path.join(base, 'MARKER');
    // The user's own signing program (in their global configuration, which write calls read): it
    // answers git's status protocol with a made-up signature, and notes that it ran.
    const signer = path.join(base, 'user-signer');
    writeFileSync(signer, `#!/bin/sh\necho "user-signer" >> '${marker}'\ncat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 1700000000 FAKE\\n' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'\n`);
    chmodSync(signer, 0o755);
    appendFileSync(path.join(os.homedir(), '.gitconfig'), `[gpg]\n\tprogram = ${signer}\n[user]\n\tsigningKey = FAKE\n`);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  /** A repository that asks for signed commits and names a signing program of its own. */
  function signingRepo(name: string): string {
    const repo = makeRepo(path.join(base, name));
    const own = path.join(base, `${name}-repo-signer`);
    writeFileSync(own, `#!/bin/sh\necho "repository-signer" >> '${marker}'\nexit 1\n`);
    chmodSync(own, 0o755);
    git(repo, ['config', 'commit.gpgSign', 'true']);
    git(repo, ['config', 'gpg.program', own]);
    writeFiles(repo, { 'a.txt': 'a\n' });
    git(repo, ['add', 'a.txt']);
    return repo;
  }
  const ran = (): string => (existsSync(marker) ? readFileSync(marker, 'utf8') : '');

  it('author: only with --allow-author, as "Name <email>"; the user stays the committer', async () => {
    const repo = makeRepo(path.join(base, 'author'));
    writeFiles(repo, { 'a.txt': 'a\n' });
    git(repo, ['add', 'a.txt']);
    session = await open([repo], { allowWrite: true });
    const plainTool = (await session.client.listTools()).tools.find((t) => t.name === 'git_commit')!;
    expect(Object.keys(plainTool.inputSchema.properties ?? {})).not.toContain('author');
    await session.close();

    session = await open([repo], { allowWrite: true, config: { allowAuthor: true } });
    const tool = (await session.client.listTools()).tools.find((t) => t.name === 'git_commit')!;
    expect(Object.keys(tool.inputSchema.properties ?? {})).toContain('author');
    expect((await session.callTool('git_commit', { message: 'x', author: 'no email' })).text).toMatch(/author must look like "Name <email>"/);
    const out = await session.callTool('git_commit', { message: 'By Ada', author: 'Ada Lovelace <ada@example.com>' });
    expect(out.text).toMatch(/ \(author: Ada Lovelace <ada@example\.com>\): By Ada$/);
    expect(git(repo, ['log', '-1', '--format=%an <%ae>|%cn <%ce>'])).toBe('Ada Lovelace <ada@example.com>|Test User <test@example.com>\n');
  });

  it('a repository asking for signed commits: unsigned, and said so, without --allow-signing; signed with the user\'s program with it; its own program never runs', async () => {
    const unsignedRepo = signingRepo('unsigned');
    session = await open([unsignedRepo], { allowWrite: true });
    const unsigned = await session.callTool('git_commit', { message: 'Unsigned' });
    expect(unsigned.isError, unsigned.text).toBe(false);
    expect(unsigned.text).toContain('Committed unsigned: the repository asks for signed commits (commit.gpgSign), and the server was not started with --allow-signing.');
    expect(git(unsignedRepo, ['cat-file', 'commit', 'HEAD'])).not.toMatch(/gpgsig/);
    await session.close();

    const signedRepo = signingRepo('signed');
    session = await open([signedRepo], { allowWrite: true, config: { allowSigning: true } });
    const signed = await session.callTool('git_commit', { message: 'Signed' });
    expect(signed.isError, signed.text).toBe(false);
    expect(signed.text).not.toContain('unsigned');
    expect(git(signedRepo, ['cat-file', 'commit', 'HEAD'])).toMatch(/^gpgsig -----BEGIN PGP SIGNATURE-----$/m);
    expect(ran()).toBe('user-signer\n');
  });
});
