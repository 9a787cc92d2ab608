/**
 * What kind of content a file holds: a MIME type from its name, and whether its bytes look like text.
 * Shared by every server that hands files to a model (filesystem, github, git-prompts).
 */
import path from 'node:path';

/**
 * MIME types by file extension. Deliberately a table rather than a dependency: the set a file
 * server needs is small, and an unknown extension falls back to content sniffing by callers
 * (see `isProbablyText`).
 */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  // Text and source code
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  xml: 'application/xml',
  json: 'application/json',
  jsonl: 'application/jsonl',
  ndjson: 'application/x-ndjson',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  ini: 'text/plain',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  jsx: 'text/javascript',
  ts: 'text/typescript',
  tsx: 'text/typescript',
  mts: 'text/typescript',
  cts: 'text/typescript',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  rs: 'text/x-rust',
  go: 'text/x-go',
  java: 'text/x-java',
  kt: 'text/x-kotlin',
  c: 'text/x-c',
  h: 'text/x-c',
  cc: 'text/x-c++',
  cpp: 'text/x-c++',
  hpp: 'text/x-c++',
  cs: 'text/x-csharp',
  php: 'text/x-php',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  sql: 'application/sql',
  svg: 'image/svg+xml',
  // Images
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  // Audio
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  opus: 'audio/opus',
  weba: 'audio/webm',
  // Video
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  ogv: 'video/ogg',
  // Archives
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  zst: 'application/zstd',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  // Documents
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  rtf: 'application/rtf',
  epub: 'application/epub+zip',
  // Fonts and binaries
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  wasm: 'application/wasm',
  sqlite: 'application/vnd.sqlite3',
  db: 'application/vnd.sqlite3',
};

/** Names without a useful extension that are nonetheless plain text. */
const TEXT_FILE_NAMES = new Set(['makefile', 'dockerfile', 'license', 'readme', 'changelog', '.gitignore', '.npmrc', '.editorconfig', '.env']);

export const OCTET_STREAM = 'application/octet-stream';

/** The MIME type for a path, judged by its extension only; `application/octet-stream` when unknown. */
export function mimeTypeFor(filePath: string): string {
  const base = path.basename(filePath).toLowerCase();
  const dot = base.lastIndexOf('.');
  if (dot > 0) {
    const known = MIME_BY_EXTENSION[base.slice(dot + 1)];
    if (known) return known;
  }
  if (TEXT_FILE_NAMES.has(base)) return 'text/plain';
  return OCTET_STREAM;
}

/** True for MIME types whose content is text (so a reader may return it as a string). */
export function isTextMimeType(mimeType: string): boolean {
  if (mimeType.startsWith('text/')) return true;
  return /^application\/(json|jsonl|x-ndjson|xml|yaml|toml|sql|javascript)$/.test(mimeType) || mimeType.endsWith('+xml') || mimeType.endsWith('+json');
}

const SNIFF_BYTES = 8192;

/**
 * Guesses whether bytes are text: no NUL byte in the first 8 KiB, and those bytes are valid UTF-8
 * (a multi-byte sequence cut at the end of the sample is allowed). Control characters other than
 * tab, line breaks, form feed and escape count against it, so that binary formats without a NUL
 * in their header are not mistaken for text.
 */
export function isProbablyText(buffer: Uint8Array): boolean {
  const length = Math.min(buffer.length, SNIFF_BYTES);
  if (length === 0) return true;
  let controls = 0;
  let i = 0;
  while (i < length) {
    const byte = buffer[i]!;
    if (byte === 0) return false;
    if (byte < 0x80) {
      if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b) controls++;
      i++;
      continue;
    }
    let continuation: number;
    if (byte >= 0xc2 && byte <= 0xdf) continuation = 1;
    else if (byte >= 0xe0 && byte <= 0xef) continuation = 2;
    else if (byte >= 0xf0 && byte <= 0xf4) continuation = 3;
    else return false;
    if (i + continuation >= length) {
      // The sample may end in the middle of a character; only the whole buffer ending there is bad.
      if (length < buffer.length) break;
      return false;
    }
    for (let k = 1; k <= continuation; k++) {
      if ((buffer[i + k]! & 0xc0) !== 0x80) return false;
    }
    i += continuation + 1;
  }
  return controls * 10 <= length;
}
