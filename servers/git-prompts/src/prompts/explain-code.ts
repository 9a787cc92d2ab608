import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { ToolError, type PromptDefinition } from '@suite/shared';
import { completePath } from '../completion.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import { languageOf } from '../resources/file.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, optionalRepository, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  code: z.string().min(1).max(200_000).describe('The code to explain, or the path of a file in the repository (completion offers them).'),
  language: z.string().max(40).optional().describe('The language, when it is not clear from the code or the file name.'),
  repo: repoArgument,
});

const LANGUAGE_CHOICES = ['TypeScript', 'JavaScript', 'Python', 'Go', 'Rust', 'Java', 'Kotlin', 'C', 'C++', 'C#', 'Ruby', 'PHP', 'Swift', 'shell', 'SQL'];

const INSTRUCTIONS = [
  'Start with two or three sentences on what it does and why it exists.',
  'Then walk through the important parts in order, naming the functions (and line numbers where it helps).',
  'Point out what is surprising, subtle or risky: edge cases, error handling, concurrency, performance, security.',
  'End with how it fits in: what it depends on and what would use it, as far as the code shows. Say what you cannot tell from the code alone.',
  'Write for a reader who knows programming but not this codebase.',
].join('\n');

/** Text that could be a path: one line, no spaces at the ends, not obviously code. */
function looksLikePath(text: string): boolean {
  return text.length <= 1024 && !/[\n{};()=]/.test(text) && text.trim() === text;
}

export function explainCodePrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'explain-code',
    title: 'Explain code',
    description: 'Explains a piece of code, or a file of the repository (give its path: the file is attached as it is in the working tree).',
    args,
    complete: {
      code: (value, context, ctx) => completePath(ws, ctx, context.arguments.repo, value),
      language: (value) => LANGUAGE_CHOICES.filter((l) => l.toLowerCase().startsWith(value.toLowerCase())),
      repo: repoCompleter(ws),
    },
    get: async ({ code, language, repo: repoName }, ctx) => {
      const repo = looksLikePath(code) ? await optionalRepository(ws, ctx, repoName) : undefined;
      if (repo) {
        // A path outside the repository is refused, not explained as text: it was meant as a path.
        const file = await resolveRepoPath(repo, code);
        if (file.exists) {
          if (!(await fs.stat(file.real)).isFile()) throw ToolError.invalidArgument(`${code} is a directory; give a file.`);
          const lang = language?.trim() || languageOf(file.relative);
          return {
            description: `Explain ${file.relative}`,
            messages: [
              say(`Explain the ${lang ? `${lang} ` : ''}file ${file.relative} of ${repo.name} (attached, as it is in the working tree).\n\n${INSTRUCTIONS}`),
              ...(await embed(ctx, gitUri.file(repo.name, file.relative))),
            ],
          };
        }
      }
      const fence = code.includes('```') ? '````' : '```';
      return {
        description: 'Explain code',
        messages: [say(`Explain this ${language ? `${language} ` : ''}code.\n\n${INSTRUCTIONS}\n\n${fence}${language?.toLowerCase() ?? ''}\n${code}\n${fence}`)],
      };
    },
  };
}
