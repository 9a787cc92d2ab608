/** Files from a repository as the model and clients receive them. */

/** `repo://OWNER/REPO/contents/PATH`, or `repo://OWNER/REPO/refs/REF/contents/PATH` at a ref (a ref with `/` is percent-encoded). */
export function contentsUri(owner: string, repo: string, path: string, ref?: string): string {
  const encodedPath = path
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
  return ref ? `repo://${owner}/${repo}/refs/${encodeURIComponent(ref)}/contents/${encodedPath}` : `repo://${owner}/${repo}/contents/${encodedPath}`;
}

export function describeBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/**
 * Binary when it has a NUL byte in its first 8 KiB (git's own test) or is not valid UTF-8: such a
 * file is a resource, not text for the model.
 */
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
}

const MIME_TYPES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  json: 'application/json',
  yml: 'application/yaml',
  yaml: 'application/yaml',
  toml: 'application/toml',
  xml: 'application/xml',
  html: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/x-typescript',
  tsx: 'text/x-typescript',
  py: 'text/x-python',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java',
  c: 'text/x-c',
  h: 'text/x-c',
  cpp: 'text/x-c++',
  sh: 'application/x-sh',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  wasm: 'application/wasm',
};

/** A MIME type from the file name; text/plain for what is not known (the content decides text or binary). */
export function guessMimeType(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && MIME_TYPES[ext]) ?? 'text/plain';
}
