import { describe, expect, it } from 'vitest';
import { OCTET_STREAM, isProbablyText, isTextMimeType, mimeTypeFor } from '../src/files/mime.js';

describe('MIME types and text sniffing (used by filesystem, github and git-prompts)', () => {
  it('maps common extensions, case-insensitively, and falls back to octet-stream', () => {
    expect(mimeTypeFor('/a/b/photo.JPG')).toBe('image/jpeg');
    expect(mimeTypeFor('clip.mp4')).toBe('video/mp4');
    expect(mimeTypeFor('song.mp3')).toBe('audio/mpeg');
    expect(mimeTypeFor('archive.tar')).toBe('application/x-tar');
    expect(mimeTypeFor('doc.pdf')).toBe('application/pdf');
    expect(mimeTypeFor('main.ts')).toBe('text/typescript');
    expect(mimeTypeFor('Makefile')).toBe('text/plain');
    expect(mimeTypeFor('.bashrc')).toBe(OCTET_STREAM);
    expect(mimeTypeFor('weird.xyz123')).toBe(OCTET_STREAM);
    expect(mimeTypeFor('noext')).toBe(OCTET_STREAM);
  });

  it('knows which MIME types are text', () => {
    expect(isTextMimeType('text/markdown')).toBe(true);
    expect(isTextMimeType('application/json')).toBe(true);
    expect(isTextMimeType('image/svg+xml')).toBe(true);
    expect(isTextMimeType('image/png')).toBe(false);
    expect(isTextMimeType(OCTET_STREAM)).toBe(false);
  });

  it('treats UTF-8 without NUL as text and the rest as binary', () => {
    expect(isProbablyText(Buffer.from(''))).toBe(true);
    expect(isProbablyText(Buffer.from('plain ascii\nwith lines\r\n\ttabs'))).toBe(true);
    expect(isProbablyText(Buffer.from('héllo wörld ✓ 🚀'))).toBe(true);
    expect(isProbablyText(Buffer.from([0x68, 0x00, 0x69]))).toBe(false);
    expect(isProbablyText(Buffer.from([0xff, 0xfe, 0x41]))).toBe(false);
    // A multi-byte character cut by the end of the whole buffer is not valid text...
    expect(isProbablyText(Buffer.from('ok ✓').subarray(0, 5))).toBe(false);
    // ...but one cut by the end of the 8 KiB sample is fine.
    const long = Buffer.concat([Buffer.from('a'.repeat(8191)), Buffer.from('✓ and more')]);
    expect(isProbablyText(long)).toBe(true);
    // Many control characters without a NUL: binary.
    expect(isProbablyText(Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 0x41]))).toBe(false);
  });
});
