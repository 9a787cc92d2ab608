import { describe, expect, it } from 'vitest';
import { escapeTerminalControls, escapeTerminalControlsInLine, hasTerminalControls } from '../src/text/terminal-text.js';

describe('terminal control sequences are made visible', () => {
  it('escapes ESC, OSC hyperlinks, BEL, CR, NUL, DEL and C1 controls, keeps tab and line feed', () => {
    const hostile = 'ok \x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \r\0 \x7f \x9b31m\tend\nnext';
    const shown = escapeTerminalControls(hostile);
    expect(shown).toBe(
      'ok \\x1b[2J\\x1b]8;;https://evil.example\\x07click\\x1b]8;;\\x07 \\x0d\\x00 \\x7f \\x9b31m\tend\nnext',
    );
    expect(hasTerminalControls(shown)).toBe(false);
    expect(hasTerminalControls(hostile)).toBe(true);
  });

  it('leaves plain text and non-ASCII letters untouched (the same string, not a copy)', () => {
    const plain = 'naïve café — 日本語 ✓ \\x1b stays as typed';
    expect(escapeTerminalControls(plain)).toBe(plain);
    expect(hasTerminalControls(plain)).toBe(false);
  });

  it('escapes line feed and tab in one-line values', () => {
    expect(escapeTerminalControlsInLine('a\nb\tc\x1bd')).toBe('a\\x0ab\\tc\\x1bd');
    expect(escapeTerminalControlsInLine('file.log')).toBe('file.log');
  });
});
