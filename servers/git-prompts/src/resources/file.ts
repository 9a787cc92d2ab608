import { constants } from 'node:fs';
import { PathGuard, ToolError, type ResourceTemplateDefinition } from '@suite/shared';
import { completePath, completeRepository } from '../completion.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import { TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';

const MAX_FILE_BYTES = 256 * 1024;

const LANGUAGES: Record<string, string> = {
  ts: 'TypeScript', tsx: 'TypeScript (JSX)', js: 'JavaScript', mjs: 'JavaScript', cjs: 'JavaScript', jsx: 'JavaScript (JSX)', py: 'Python', rb: 'Ruby', go: 'Go', rs: 'Rust',
  java: 'Java', kt: 'Kotlin', swift: 'Swift', c: 'C', h: 'C', cc: 'C++', cpp: 'C++', hpp: 'C++', cs: 'C#', php: 'PHP', sh: 'shell', bash: 'shell', zsh: 'shell',
  sql: 'SQL', md: 'Markdown', json: 'JSON', yaml: 'YAML', yml: 'YAML', toml: 'TOML', html: 'HTML', css: 'CSS', scss: 'SCSS', vue: 'Vue', svelte: 'Svelte',
  lua: 'Lua', ex: 'Elixir', exs: 'Elixir', erl: 'Erlang', hs: 'Haskell', scala: 'Scala', clj: 'Clojure', dart: 'Dart', r: 'R', pl: 'Perl', zig: 'Zig', nix: 'Nix',
};

/** The language of a file by its extension, for the explain-code prompt. */
export function languageOf(file: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase();
  return ext ? LANGUAGES[ext] : /(^|\/)(Dockerfile|Makefile)$/.test(file) ? file.split('/').pop() : undefined;
}

/** A file of the working tree as it is now (committed or not): inside the repository, symlinks followed to check. */
export function fileResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.file,
    name: 'file',
    title: 'A file of the working tree',
    description: `A file as it is in the working tree now, up to ${MAX_FILE_BYTES / 1024} KiB. The path is relative to the top of the repository, percent-encoded (src%2Fapp.ts).`,
    mimeType: 'text/plain',
    read: async (uri, { repo: name, path: userPath = '' }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      const file = await resolveRepoPath(repo, userPath);
      if (!file.exists) throw ToolError.notFound(`${userPath} does not exist in the working tree of ${repo.name}.`);
      // Opened without following a final symlink, and checked again after the open (a directory swapped
      // for a symlink since the check would show here); non-blocking, so a FIFO cannot hang the read.
      const handle = await new PathGuard([repo.top]).open(file.real, constants.O_RDONLY | constants.O_NONBLOCK, undefined, userPath).catch((error: unknown) => {
        if (error instanceof ToolError) throw error;
        throw ToolError.notFound(`${userPath} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
      });
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw ToolError.invalidArgument(`${userPath} is not a regular file.`);
        const buffer = Buffer.alloc(Math.min(stat.size, MAX_FILE_BYTES));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        const bytes = buffer.subarray(0, bytesRead);
        if (bytes.subarray(0, 8000).includes(0)) return { uri, mimeType: 'text/plain', text: `Binary file, ${stat.size} bytes: not shown.\n` };
        let text = bytes.toString('utf8');
        if (stat.size > MAX_FILE_BYTES) text = `${text.slice(0, text.lastIndexOf('\n') + 1)}[… file cut at ${MAX_FILE_BYTES / 1024} KiB of ${stat.size} bytes]\n`;
        return { uri, mimeType: 'text/plain', text };
      } finally {
        await handle.close();
      }
    },
    // A file of the working tree changes when it is edited: the one case where the file itself is followed.
    subscribe: async (_uri, { repo: name, path: userPath = '' }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      return { paths: [(await resolveRepoPath(repo, userPath)).real] };
    },
    complete: {
      repo: (value, _context, ctx) => completeRepository(ws, ctx, value),
      path: (value, context, ctx) => completePath(ws, ctx, context.arguments.repo, value),
    },
  };
}
