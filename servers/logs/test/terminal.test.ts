import { appendFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { fixture, isoAgo, lines, type Fixture } from './helpers.js';

/**
 * Terminal control sequences in log lines and file names (ESC, an OSC 8 hyperlink, BEL, CR, NUL,
 * C1) reach clients as visible escapes, never raw: in every tool's text and structured content,
 * resource reads and listings, prompts and completion values.
 */

// Every C0 control but tab and line feed, DEL, and C1.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

function rawControls(value: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (RAW_CONTROL.test(v)) found.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return found;
}

const OSC_LINK = '\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07';
const NAME = 'evil\x1b[2J\x07.log';

describe('terminal controls in logs and file names (in-process)', () => {
  let fx: Fixture;
  let session: TestSession;
  let file: string;
  beforeAll(async () => {
    fx = await fixture();
    // The NUL comes after the first 8 KiB (a NUL near the start makes a file binary, and refused).
    const padding = Array.from({ length: 200 }, (_, i) => `${isoAgo(30 - i / 10)} INFO filler ${i} ${'-'.repeat(40)}`);
    file = await fx.write(
      NAME,
      lines(
        ...padding,
        `${isoAgo(5)} ERROR boom \x1b[31mred\x1b[0m ${OSC_LINK} bell\x07 over\rwritten nul\x00 csi\x9b2J`,
        `${isoAgo(4)} ERROR boom \x1b[31mred\x1b[0m ${OSC_LINK} bell\x07 over\rwritten nul\x00 csi\x9b2J`,
      ),
    );
    session = await fx.connect();
  });
  afterAll(async () => {
    await fx.close();
  });

  const ESCAPED = /boom \\x1b\[31mred\\x1b\[0m \\x1b\]8;;https:\/\/evil\.example\/\\x07click me\\x1b\]8;;\\x07 bell\\x07 over\\x0dwritten nul\\x00 csi\\x9b2J/;

  it('tools show them escaped, in text and structured content', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['list_logs', {}],
      ['tail_log', { path: file, lines: 5 }],
      ['tail_log', { path: file, level: 'error' }],
      ['read_log_range', { path: file, startLine: 199 }],
      ['search_logs', { pattern: 'boom', contextLines: 1 }],
      ['search_logs', { level: 'error' }],
      ['log_stats', {}],
    ];
    for (const [tool, args] of calls) {
      const out = await session.callTool(tool, args);
      expect(out.isError, `${tool}: ${out.text}`).toBe(false);
      expect(rawControls(out.text), tool).toEqual([]);
      expect(rawControls(out.structured), tool).toEqual([]);
      if (tool === 'list_logs' || tool === 'search_logs') expect(out.text, tool).toMatch(/evil\\x1b\[2J\\x07\.log/);
      if (tool !== 'list_logs') expect(out.text, tool).toMatch(ESCAPED);
    }
    const start = await session.callTool('read_new_lines', { path: file });
    await appendFile(file, `${isoAgo(1)} ERROR new \x1b]0;title\x07 line\n`);
    const next = await session.callTool('read_new_lines', { path: file, cursor: (start.structured as { cursor: string }).cursor });
    expect(rawControls([next.text, next.structured])).toEqual([]);
    expect(next.text).toContain('ERROR new \\x1b]0;title\\x07 line');
  });

  it('resource reads, listings, prompts and completion values show them escaped', async () => {
    const uri = `logs://file${file.split('/').map(encodeURIComponent).join('/')}`;
    const read = await session.readResource(uri);
    expect(rawControls(read.text)).toEqual([]);
    expect(read.text).toMatch(ESCAPED);
    const recent = await session.readResource('logs://recent');
    expect(rawControls(recent.text)).toEqual([]);
    expect(recent.text).toMatch(ESCAPED);
    const { resources } = await session.client.listResources();
    expect(rawControls(resources)).toEqual([]);
    expect(resources.some((r) => r.name === 'evil\\x1b[2J\\x07.log')).toBe(true);
    const completions = [
      await session.complete({ template: 'logs://file/{+path}' }, 'path', 'evil'),
      await session.complete({ prompt: 'analyze-logs' }, 'file', 'evil'),
      await session.complete({ prompt: 'debug-error' }, 'error', 'boom'),
    ];
    expect(rawControls(completions)).toEqual([]);
    expect(completions[0]?.values.some((v) => v.endsWith('evil\\x1b[2J\\x07.log'))).toBe(true);
    expect(completions[2]?.values.some((v) => v.includes('\\x1b[31mred'))).toBe(true);
    const prompt = await session.getPrompt('debug-error', { error: 'boom' });
    expect(rawControls(prompt)).toEqual([]);
  });
});
