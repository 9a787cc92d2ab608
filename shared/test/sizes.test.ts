import { describe, expect, it } from 'vitest';
import { countOf, formatBytes } from '../src/text/sizes.js';

describe('counts and sizes in messages', () => {
  it('says one of a thing in the singular and any other count in the plural', () => {
    expect(countOf(1, 'file')).toBe('1 file');
    expect(countOf(0, 'file')).toBe('0 files');
    expect(countOf(2, 'entry', 'entries')).toBe('2 entries');
    expect(countOf(1, 'entry', 'entries')).toBe('1 entry');
  });

  it('spells byte counts in binary units', () => {
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(512)).toBe('512 bytes');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(10 * 1024 * 1024)).toBe('10 MiB');
  });
});
