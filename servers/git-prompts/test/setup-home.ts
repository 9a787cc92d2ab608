import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Every test file runs with a home of its own: the user's real ~/.gitconfig (a signing set-up, hooks,
// aliases) must not change what the tests see, and write calls read the global configuration.
const home = mkdtempSync(path.join(os.tmpdir(), 'git-prompts-home-'));
writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n');
process.env.HOME = home;
delete process.env.XDG_CONFIG_HOME;
for (const name of Object.keys(process.env)) if (name.startsWith('GIT_')) delete process.env[name];
process.env.GIT_CONFIG_NOSYSTEM = '1';
