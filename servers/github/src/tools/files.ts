import { z } from 'zod';
import { ToolError, type ContentBlock, formatBytes, isProbablyText } from '@suite/shared';
import type { GithubCall } from '../github-session.js';
import { httpStatus } from '../github-errors.js';
import { githubTool } from '../github-tool.js';
import type { ContentsAnswer, DirectoryEntry, FileCommit, FileEntry, GitRef, SubmoduleEntry, SymlinkEntry } from '../github-types.js';
import { fullName, repoParams, text } from '../params.js';
import { firstLine, sizeOf } from '../present.js';
import { anyPathField, branchField, branchRef, contentsRoute, filePathField } from '../repo-paths.js';
import { contentsUri, guessMimeType } from '../file-contents.js';


const refField = text.optional();

async function getContents(call: GithubCall, owner: string, repo: string, path: string, ref: string | undefined): Promise<ContentsAnswer> {
  const { data } = await call.api.request(contentsRoute('GET', path), { owner, repo, ...(ref ? { ref } : {}) });
  return data as ContentsAnswer;
}

function directoryListing(owner: string, repo: string, path: string, ref: string | undefined, entries: DirectoryEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1));
  const lines = sorted.map((e) => (e.type === 'dir' ? `${e.name}/` : e.type === 'file' ? `${e.name} (${sizeOf(e.size, formatBytes)})` : `${e.name} [${e.type}]`));
  return `${fullName(owner, repo)}:/${path}${ref ? ` at ${ref}` : ''}: ${entries.length} entries\n${lines.join('\n')}`;
}

export const getFileContents = githubTool({
  name: 'get_file_contents',
  toolset: 'repos',
  description: 'A file as text, or a directory listing; binary or over 1 MB: a repo:// link.',
  input: z.object({ ...repoParams, path: anyPathField.optional(), ref: refField }),
  aliases: { branch: 'ref' },
  annotations: { title: 'Get file', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  outputLimit: (limits) => limits.maxFileBytes + 1000,
  run: async ({ owner, repo, path = '', ref }, call) => {
    const data = await getContents(call, owner, repo, path, ref);
    if (Array.isArray(data)) return directoryListing(owner, repo, path, ref, data);
    const where = `${fullName(owner, repo)}:/${data.path}${ref ? ` at ${ref}` : ''}`;
    if (data.type === 'symlink') return `${where} is a symbolic link to ${(data as SymlinkEntry).target}.`;
    if (data.type === 'submodule') return `${where} is a submodule: ${(data as SubmoduleEntry).submodule_git_url}.`;
    const file = data as FileEntry;
    const uri = contentsUri(owner, repo, file.path, ref);
    const mimeType = guessMimeType(file.path);
    const link = (why: string): { content: ContentBlock[] } => ({
      content: [
        { type: 'text', text: `${where} (${sizeOf(file.size, formatBytes)}, sha ${file.sha.slice(0, 7)}) is ${why}; read it as the resource ${uri}.` },
        { type: 'resource_link', uri, name: file.name, mimeType, description: `${sizeOf(file.size, formatBytes)} from ${fullName(owner, repo)}` },
      ],
    });
    if (file.size > call.config.limits.maxFileBytes || file.encoding !== 'base64') return link(`larger than ${formatBytes(call.config.limits.maxFileBytes)}`);
    const bytes = Buffer.from(file.content, 'base64');
    if (!isProbablyText(bytes)) return link('binary');
    return {
      content: [
        { type: 'text', text: `${where} (${sizeOf(file.size, formatBytes)}, sha ${file.sha.slice(0, 7)}):` },
        { type: 'text', text: bytes.toString('utf8') },
      ],
    };
  },
});

/** The blob sha of an existing file (undefined when the path does not exist yet), for updates that omit it. */
async function existingSha(call: GithubCall, owner: string, repo: string, path: string, branch: string | undefined): Promise<string | undefined> {
  try {
    const data = await getContents(call, owner, repo, path, branch);
    if (Array.isArray(data)) throw ToolError.invalidArgument(`${path} is a directory in ${fullName(owner, repo)}; give the path of a file.`);
    return data.sha;
  } catch (error) {
    if (httpStatus(error) === 404) return undefined;
    throw error;
  }
}

const branchOption = branchField.optional();

export const createOrUpdateFile = githubTool({
  name: 'create_or_update_file',
  toolset: 'repos',
  description: 'Creates or replaces a file in one commit.',
  input: z.object({
    ...repoParams,
    path: filePathField,
    content: z.string(),
    message: text,
    branch: branchOption,
    sha: z.string().optional(),
  }),
  annotations: { title: 'Write file', readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  permission: 'Contents: write',
  run: async ({ owner, repo, path, content, message, branch, sha }, call) => {
    const current = sha ?? (await existingSha(call, owner, repo, path, branch));
    const { data } = await call.api.request(contentsRoute('PUT', path), {
      owner,
      repo,
      message,
      content: Buffer.from(content, 'utf8').toString('base64'),
      ...(branch ? { branch } : {}),
      ...(current ? { sha: current } : {}),
    });
    const result = data as FileCommit;
    return `${current ? 'Updated' : 'Created'} ${path} on ${branch ?? 'the default branch'} of ${fullName(owner, repo)}: commit ${result.commit.sha?.slice(0, 7) ?? '?'}${result.content?.sha ? `, blob ${result.content.sha}` : ''}.`;
  },
});

export const deleteFile = githubTool({
  name: 'delete_file',
  toolset: 'repos',
  description: 'Deletes a file in one commit.',
  input: z.object({ ...repoParams, path: filePathField, message: text, branch: branchOption, sha: z.string().optional() }),
  annotations: { title: 'Delete file', readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  permission: 'Contents: write',
  run: async ({ owner, repo, path, message, branch, sha }, call) => {
    const current = sha ?? (await existingSha(call, owner, repo, path, branch));
    if (!current) throw ToolError.notFound(`${path} does not exist on ${branch ?? 'the default branch'} of ${fullName(owner, repo)}; nothing to delete.`);
    const { data } = await call.api.request(contentsRoute('DELETE', path), { owner, repo, message, sha: current, ...(branch ? { branch } : {}) });
    const result = data as FileCommit;
    return `Deleted ${path} from ${branch ?? 'the default branch'} of ${fullName(owner, repo)}: commit ${result.commit.sha?.slice(0, 7) ?? '?'}.`;
  },
});

const MAX_PUSH_FILES = 100;

export const pushFiles = githubTool({
  name: 'push_files',
  toolset: 'repos',
  description: 'Commits several files at once; never force-pushes.',
  input: z.object({
    ...repoParams,
    branch: branchOption,
    files: z.array(z.object({ path: filePathField, content: z.string() })).refine((f) => f.length >= 1 && f.length <= MAX_PUSH_FILES, `1 to ${MAX_PUSH_FILES} files`),
    message: text,
  }),
  annotations: { title: 'Push files', readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  permission: 'Contents: write',
  run: async ({ owner, repo, branch: requested, files, message }, call) => {
    const paths = new Set<string>();
    for (const f of files) {
      if (paths.has(f.path)) throw ToolError.invalidArgument(`${f.path} appears twice in files; give each path once.`);
      paths.add(f.path);
    }
    const { api } = call;
    const branch = requested ?? (await call.defaultBranch(owner, repo));
    const ref = branchRef(branch);
    const { data: head } = await api.request(`GET /repos/{owner}/{repo}/git/ref/${ref}`, { owner, repo });
    const headSha = (head as GitRef).object.sha;
    const { data: headCommit } = await api.rest.git.getCommit({ owner, repo, commit_sha: headSha });
    const { data: tree } = await api.rest.git.createTree({
      owner,
      repo,
      base_tree: headCommit.tree.sha,
      tree: files.map((f) => ({ path: f.path, mode: '100644' as const, type: 'blob' as const, content: f.content })),
    });
    const { data: commit } = await api.rest.git.createCommit({ owner, repo, message, tree: tree.sha, parents: [headSha] });
    try {
      await api.request(`PATCH /repos/{owner}/{repo}/git/refs/${ref}`, { owner, repo, sha: commit.sha, force: false });
    } catch (error) {
      if (httpStatus(error) === 422) {
        throw ToolError.conflict(
          `${branch} of ${fullName(owner, repo)} moved while pushing (someone pushed to it), and this server never force-pushes: the branch is unchanged. Read the files again and retry.`,
        );
      }
      throw error;
    }
    return `Pushed ${files.length} file${files.length === 1 ? '' : 's'} to ${branch} of ${fullName(owner, repo)}: commit ${commit.sha.slice(0, 7)} "${firstLine(commit.message)}" on top of ${headSha.slice(0, 7)}.`;
  },
});
