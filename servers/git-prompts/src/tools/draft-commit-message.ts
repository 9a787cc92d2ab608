import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import { commitInstructions, commitStyle } from '../commit-message.js';
import { hasChanges, renderDiff } from '../git/diff.js';
import { describeStatus, readStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const input = z.object({
  repo_path: repoPath,
  changes: z.string().min(1).max(200_000).optional().describe('The changes to describe (a diff or a description). Omitted: the staged changes of the repository.'),
});

const output = z.object({
  source: z.enum(['sampling', 'prompt']).describe("'sampling': the client's model wrote `message`; 'prompt': no model was available here, so `prompt` is the request to answer yourself."),
  message: z.string().optional(),
  model: z.string().optional(),
  prompt: z.string().optional(),
});

/** The answer is a commit message: short. A summary line and a short body fit in this. */
const MAX_TOKENS = 400;
const SYSTEM_PROMPT = 'You write git commit messages. You answer with the commit message only.';

export function draftCommitMessage(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'draft_commit_message',
    toolset: 'commit',
    description:
      "Drafts a commit message for the staged changes (or for `changes`). When the client supports sampling, the client's model writes it (the user may be asked to approve); otherwise the result is the request itself, the same text as the git-commit prompt, for you to answer.",
    input,
    output,
    // It changes nothing in the repository, but its answer is written by the client's model (open
    // world: outside this server), and a model asked twice writes two different messages.
    annotations: { title: 'Draft a commit message', readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async ({ repo_path, changes }, ctx) => {
      let request: string;
      if (changes !== undefined) {
        // The repository only lends its style here; without one the changes are enough.
        const repo = repo_path !== undefined || (await ws.repositories(ctx)).length === 1 ? await ws.resolve(ctx, repo_path) : undefined;
        const style = repo ? await commitStyle(repo, ctx.signal) : undefined;
        request = `${commitInstructions('these changes', style)}\n\nThe changes:\n\n${changes}`;
      } else {
        const repo = await ws.resolve(ctx, repo_path);
        const [staged, style] = await Promise.all([hasChanges(repo, 'staged', ctx.signal), commitStyle(repo, ctx.signal)]);
        if (!staged) {
          const status = await readStatus(repo, ctx.signal);
          throw ToolError.conflict(
            `Nothing is staged in ${repo.name}, so there is nothing to describe yet. Stage the changes that belong in the commit first (git_add), or pass the changes as \`changes\`.\n\n${describeStatus(status, repo.name)}`,
          );
        }
        const diff = await renderDiff(repo, { source: { kind: 'staged' }, budget: ws.config.budget, signal: ctx.signal, seeMore: 'git_diff_staged with path shows one of them.' });
        request = `${commitInstructions(`the staged changes in ${repo.name}`, style)}\n\nThe staged diff:\n\n${diff.text}`;
      }

      if (ctx.client.sampling) {
        try {
          const answer = await ctx.client.createMessage(
            {
              messages: [{ role: 'user', content: { type: 'text', text: request } }],
              systemPrompt: SYSTEM_PROMPT,
              maxTokens: MAX_TOKENS,
              temperature: 0.2,
              // A commit message is a small, well-defined task: a fast, cheap model does it well.
              modelPreferences: { speedPriority: 0.8, costPriority: 0.6, intelligencePriority: 0.4 },
              includeContext: 'none',
            },
            { timeoutMs: 120_000 },
          );
          const message = answer.text.trim().replace(/^```[a-z]*\n([\s\S]*?)\n```$/, '$1').trim();
          if (message !== '') return { text: message, structured: { source: 'sampling', message, model: answer.model } };
          ctx.log.info('the client model answered with no text; falling back to the prompt');
        } catch (error) {
          // Cancellation ends the call; a refusal or a timeout leaves the model in the conversation to do it.
          if (ctx.signal.aborted || !(error instanceof ToolError)) throw error;
          return {
            text: `The client did not write the message (${error.message}) Write it yourself from this request:\n\n${request}`,
            structured: { source: 'prompt', prompt: request },
          };
        }
      }
      return {
        text: `This client cannot run sampling, so here is the request; answer it with the commit message:\n\n${request}`,
        structured: { source: 'prompt', prompt: request },
      };
    },
  };
}
