import { createRequire } from 'node:module';
import { SuiteServer } from '@suite/shared';
import { registerCountWords } from './tools/count-words.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

/** What every session of this server shares; parsed from the command line in index.ts. */
export interface __CONFIG__Config {
  uppercase: boolean;
}

/** Builds the server for one session: register tools, resources and prompts here. */
export function buildServer(config: __CONFIG__Config): SuiteServer {
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: 'Describe here, for the model, when to use this server and how.',
  });
  registerCountWords(server, config);
  return server;
}
