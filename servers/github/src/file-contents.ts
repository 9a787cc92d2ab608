import { OCTET_STREAM, mimeTypeFor } from '@suite/shared';

/** Files from a repository as the model and clients receive them. */

/** `repo://OWNER/REPO/contents/PATH`, or `repo://OWNER/REPO/refs/REF/contents/PATH` at a ref (a ref with `/` is percent-encoded). */
export function contentsUri(owner: string, repo: string, path: string, ref?: string): string {
  const encodedPath = path
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
  return ref ? `repo://${owner}/${repo}/refs/${encodeURIComponent(ref)}/contents/${encodedPath}` : `repo://${owner}/${repo}/contents/${encodedPath}`;
}

/**
 * A MIME type from the file name (shared's table); text/plain for a name it does not know, since
 * the content (shared's isProbablyText) decides whether a file is shown as text at all.
 */
export function guessMimeType(path: string): string {
  const type = mimeTypeFor(path);
  return type === OCTET_STREAM ? 'text/plain' : type;
}
