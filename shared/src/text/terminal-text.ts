/**
 * Text that came from a file, a log or a repository, made safe to show in a terminal.
 *
 * Many clients print tool output to a terminal, where ESC starts a control sequence (colours, cursor
 * moves, OSC 8 hyperlinks, window titles), BEL rings, CR overwrites the line and NUL may end it. A
 * hostile log line or file name could then hide text or show a link that is not what it says. Every
 * C0 control but tab and line feed, DEL and every C1 control (U+0080..U+009F, which some terminals
 * also act on) is written as a visible escape (`\x1b`, `\x07`, `\x9b`), so what was there stays
 * readable and nothing is acted on. A backslash is left as it is: the escapes are for a person's
 * eyes, not a reversible encoding.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\x00-\x1f\x7f-\x9f]/g;

function escapeOne(char: string): string {
  return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** Multi-line text (a log line with its continuation lines, a diff): tab and line feed stay. */
export function escapeTerminalControls(text: string): string {
  CONTROL.lastIndex = 0;
  return CONTROL.test(text) ? text.replace(CONTROL, escapeOne) : text;
}

/** One-line values (a file name, a completion value, a ref name): line feed is escaped too. */
export function escapeTerminalControlsInLine(text: string): string {
  CONTROL_OR_NEWLINE.lastIndex = 0;
  return CONTROL_OR_NEWLINE.test(text) ? text.replace(/\t/g, '\\t').replace(CONTROL_OR_NEWLINE, escapeOne) : text;
}

/** Whether the text holds anything `escapeTerminalControls` would change. */
export function hasTerminalControls(text: string): boolean {
  CONTROL.lastIndex = 0;
  return CONTROL.test(text);
}
