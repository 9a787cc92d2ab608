import { ToolError, type RequestContext, type ResourceContents, type ResourceTemplateDefinition, type TemplateVariables, formatBytes, isProbablyText } from '@suite/shared';
import { completers } from '../completions.js';
import { contentsUri, guessMimeType } from '../file-contents.js';
import type { GithubCall, GithubSession } from '../github-session.js';
import type { ContentsAnswer, FileEntry } from '../github-types.js';
import { fullName, isOwnerName, isRepoName } from '../params.js';
import { anyPathField, contentsRoute } from '../repo-paths.js';
import { count, sizeOf } from '../present.js';

/** Reads a body stream up to `max` bytes; undefined when it is longer. */
async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) return undefined;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function fileContents(uri: string, path: string, bytes: Buffer): ResourceContents {
  const mimeType = guessMimeType(path);
  return !isProbablyText(bytes) ? { uri, mimeType: mimeType === 'text/plain' ? 'application/octet-stream' : mimeType, blob: bytes.toString('base64') } : { uri, mimeType, text: bytes.toString('utf8') };
}

/** A file (text, or a blob when binary) or a directory listing, up to limits.maxResourceBytes. */
async function readContents(call: GithubCall, owner: string, repo: string, path: string, ref: string | undefined, uri: string): Promise<ResourceContents> {
  const params = { owner, repo, ...(ref ? { ref } : {}) };
  const { data } = await call.api.request(contentsRoute('GET', path), params);
  const answer = data as ContentsAnswer;
  if (Array.isArray(answer)) {
    const lines = answer.map((e) => `${e.type === 'dir' ? `${e.name}/` : e.name}\t${e.type}\t${count(e.size)}\t${contentsUri(owner, repo, e.path, ref)}`);
    return { uri, mimeType: 'text/plain', text: lines.join('\n') };
  }
  if (answer.type !== 'file') throw ToolError.invalidArgument(`${path} in ${fullName(owner, repo)} is a ${answer.type}, not a file or directory.`);
  const file = answer as FileEntry;
  const { maxResourceBytes } = call.config.limits;
  if (file.size > maxResourceBytes) {
    throw new ToolError(`${path} in ${fullName(owner, repo)} is ${sizeOf(file.size, formatBytes)}, more than the ${formatBytes(maxResourceBytes)} a resource read returns. Download it from ${file.download_url ?? file.html_url ?? 'GitHub'}.`);
  }
  if (file.encoding === 'base64' && file.content) return fileContents(uri, file.path, Buffer.from(file.content, 'base64'));
  // Over 1 MB GitHub leaves `content` empty; the raw media type streams the bytes.
  const raw = await call.api.request(contentsRoute('GET', path), { ...params, mediaType: { format: 'raw' }, request: { parseSuccessResponseBody: false } });
  const bytes = await readCapped(raw.data as AsyncIterable<Uint8Array>, maxResourceBytes);
  if (!bytes) throw new ToolError(`${path} in ${fullName(owner, repo)} is more than ${formatBytes(maxResourceBytes)}; download it from GitHub instead.`);
  return fileContents(uri, file.path, bytes);
}

function checked(variables: TemplateVariables): { owner: string; repo: string; path: string } {
  const { owner = '', repo = '', path = '' } = variables;
  if (!isOwnerName(owner) || !isRepoName(repo)) throw ToolError.invalidArgument(`Not a repository: ${owner}/${repo}. The URI is repo://OWNER/REPO/contents/PATH.`);
  const parsed = anyPathField.safeParse(path);
  if (!parsed.success) throw ToolError.invalidArgument(`Not a path in a repository: ${JSON.stringify(path)} (${parsed.error.issues[0]?.message ?? 'invalid'}).`);
  return { owner, repo, path };
}

/**
 * repo://OWNER/REPO/contents/PATH (the default branch) and repo://OWNER/REPO/refs/REF/contents/PATH
 * (a branch, tag or SHA; a ref with `/` is percent-encoded): files as text or blobs, directories as
 * listings. get_file_contents links here for binary and large files.
 */
export function repoContentTemplates(github: GithubSession): ResourceTemplateDefinition[] {
  const complete = completers(github);
  const read = (ctx: RequestContext, variables: TemplateVariables, uri: string, ref: string | undefined): Promise<ResourceContents> => {
    const { owner, repo, path } = checked(variables);
    return github.run(ctx, 'Contents: read', (call) => readContents(call, owner, repo, path, ref, uri));
  };
  return [
    {
      uriTemplate: 'repo://{owner}/{repo}/contents/{+path}',
      name: 'repository-file',
      title: 'A file or directory of a repository (default branch)',
      description: 'Files come back as text, or as a blob when binary; directories as a listing of entries with their URIs.',
      read: (uri, variables, ctx) => read(ctx, variables, uri, undefined),
      complete: { owner: complete.owner, repo: complete.repo },
    },
    {
      uriTemplate: 'repo://{owner}/{repo}/refs/{ref}/contents/{+path}',
      name: 'repository-file-at-ref',
      title: 'A file or directory of a repository at a branch, tag or commit',
      description: 'As repository-file, at a ref (percent-encode a / in the ref, e.g. feature%2Fx).',
      read: (uri, variables, ctx) => {
        const ref = variables.ref ?? '';
        // eslint-disable-next-line no-control-regex -- git refuses control characters in ref names
        if (!ref || ref.length > 255 || /[\u0000-\u0020~^:?*[\\]/.test(ref)) throw ToolError.invalidArgument(`Not a ref: ${JSON.stringify(ref)}.`);
        return read(ctx, variables, uri, ref);
      },
      complete: { owner: complete.owner, repo: complete.repo, ref: complete.branch },
    },
  ];
}
