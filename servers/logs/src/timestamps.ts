/**
 * Timestamp parsing for the log formats, written for speed: a statistics pass parses one per line
 * over gigabytes, so there is no regular expression or Date.parse on the hot path, only character
 * codes and Date.UTC. Times without a zone are the server's local time (as `tail` and `grep`
 * users read them), cached per hour so a DST rule is consulted once an hour of log, not per line.
 * A leaf module: the worker thread imports it too.
 */

const MONTHS: Readonly<Record<string, number>> = {
  Jan: 1, Feb: 2, Mar: 3, Apr: 4, May: 5, Jun: 6, Jul: 7, Aug: 8, Sep: 9, Oct: 10, Nov: 11, Dec: 12,
};

function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** `n` digits at i as a number, or -1. */
function digits(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const d = digit(s, i + k);
    if (d < 0) return -1;
    v = v * 10 + d;
  }
  return v;
}

const localOffsets = new Map<number, number>();

/** Milliseconds to add to a wall-clock time read as UTC to get the instant, in the local zone. */
function localOffset(y: number, mo: number, d: number, h: number): number {
  const key = ((y * 13 + mo) * 32 + d) * 24 + h;
  let offset = localOffsets.get(key);
  if (offset === undefined) {
    offset = new Date(y, mo - 1, d, h).getTime() - Date.UTC(y, mo - 1, d, h);
    if (localOffsets.size > 10_000) localOffsets.clear();
    localOffsets.set(key, offset);
  }
  return offset;
}

function valid(mo: number, d: number, h: number, mi: number, s: number): boolean {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 60;
}

export interface ParsedTime {
  time: number;
  /** Index just past the timestamp. */
  end: number;
}

/** `±HH:MM`, `±HHMM`, `±HH` or `Z` at i: the offset in minutes and where it ends. */
function zoneAt(s: string, i: number): { minutes: number; end: number } | undefined {
  const c = s[i];
  if (c === 'Z' || c === 'z') return { minutes: 0, end: i + 1 };
  if (c !== '+' && c !== '-') return undefined;
  const sign = c === '-' ? -1 : 1;
  const hh = digits(s, i + 1, 2);
  if (hh < 0) return undefined;
  let end = i + 3;
  let mm = 0;
  if (s[end] === ':' && digits(s, end + 1, 2) >= 0) {
    mm = digits(s, end + 1, 2);
    end += 3;
  } else if (digits(s, end, 2) >= 0) {
    mm = digits(s, end, 2);
    end += 2;
  }
  return { minutes: sign * (hh * 60 + mm), end };
}

/**
 * ISO 8601 / RFC 3339 at i: `2024-01-15T10:00:00`, a space instead of the T, `.123` or `,123`
 * (Python) fractions, `Z` or an offset; `2024/01/15 10:00:00` (nginx error logs) too.
 */
/** The last minute parsed (`2024-01-15T10:00` and its UTC wall-clock start): lines of a log mostly share it. */
let lastMinute = '';
let lastMinuteWall = 0;
let lastMinuteFields: [number, number, number, number] = [0, 0, 0, 0];

export function parseIsoAt(s: string, i: number): ParsedTime | undefined {
  // Same minute as the line before (the common case in a log): only seconds, fraction and zone are new.
  if (lastMinute.length > 0 && s.startsWith(lastMinute, i) && s[i + 16] === ':') {
    const sec = digits(s, i + 17, 2);
    if (sec >= 0 && sec <= 60) return finishIso(s, i, lastMinuteWall, sec, lastMinuteFields);
  }
  const y = digits(s, i, 4);
  if (y < 0) return undefined;
  const sep = s[i + 4];
  if ((sep !== '-' && sep !== '/') || s[i + 7] !== sep) return undefined;
  const mo = digits(s, i + 5, 2);
  const d = digits(s, i + 8, 2);
  const t = s[i + 10];
  if (t !== 'T' && t !== ' ' && t !== 't') return undefined;
  const h = digits(s, i + 11, 2);
  const mi = digits(s, i + 14, 2);
  const sec = digits(s, i + 17, 2);
  if (s[i + 13] !== ':' || s[i + 16] !== ':' || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0 || !valid(mo, d, h, mi, sec)) return undefined;
  lastMinute = s.slice(i, i + 16);
  lastMinuteWall = Date.UTC(y, mo - 1, d, h, mi);
  lastMinuteFields = [y, mo, d, h];
  return finishIso(s, i, lastMinuteWall, sec, lastMinuteFields);
}

/** Seconds, fraction (`.123` or `,123`) and zone of an ISO timestamp whose minute is known. */
function finishIso(s: string, i: number, minuteWall: number, sec: number, [y, mo, d, h]: [number, number, number, number]): ParsedTime | undefined {
  let end = i + 19;
  let ms = 0;
  const frac = s[end];
  if (frac === '.' || frac === ',') {
    let k = end + 1;
    let scale = 100;
    while (digit(s, k) >= 0) {
      if (scale >= 1) ms += digit(s, k) * scale;
      scale /= 10;
      k++;
    }
    if (k === end + 1) return undefined;
    end = k;
    ms = Math.floor(ms);
  }
  const wall = minuteWall + sec * 1000 + ms;
  const zone = zoneAt(s, end);
  if (zone) return { time: wall - zone.minutes * 60_000, end: zone.end };
  return { time: wall + localOffset(y, mo, d, h), end };
}

/** Apache and nginx access logs: `10/Oct/2000:13:55:36 -0700` at i. */
export function parseClfAt(s: string, i: number): ParsedTime | undefined {
  const d = digits(s, i, 2);
  const mo = MONTHS[s.slice(i + 3, i + 6)];
  const y = digits(s, i + 7, 4);
  const h = digits(s, i + 12, 2);
  const mi = digits(s, i + 15, 2);
  const sec = digits(s, i + 18, 2);
  if (s[i + 2] !== '/' || s[i + 6] !== '/' || s[i + 11] !== ':' || mo === undefined || d < 0 || y < 0 || h < 0 || mi < 0 || sec < 0) return undefined;
  if (!valid(mo, d, h, mi, sec)) return undefined;
  const wall = Date.UTC(y, mo - 1, d, h, mi, sec);
  if (s[i + 20] === ' ') {
    const zone = zoneAt(s, i + 21);
    if (zone) return { time: wall - zone.minutes * 60_000, end: zone.end };
  }
  return { time: wall + localOffset(y, mo, d, h), end: i + 20 };
}

/**
 * RFC 3164 syslog: `Oct 11 22:14:15` or `Oct  1 22:14:15` at i. The year is not written: it is
 * the year of `reference` (the file's modification time), or the one before when that would put
 * the entry more than a day after the file was last written (a log that spans New Year).
 */
export function parseSyslogDateAt(s: string, i: number, reference: number): ParsedTime | undefined {
  const mo = MONTHS[s.slice(i, i + 3)];
  if (mo === undefined || s[i + 3] !== ' ') return undefined;
  const d = s[i + 4] === ' ' ? digits(s, i + 5, 1) : digits(s, i + 4, 2);
  const h = digits(s, i + 7, 2);
  const mi = digits(s, i + 10, 2);
  const sec = digits(s, i + 13, 2);
  if (d < 0 || h < 0 || mi < 0 || sec < 0 || s[i + 9] !== ':' || s[i + 12] !== ':' || !valid(mo, d, h, mi, sec)) return undefined;
  let end = i + 15;
  let ms = 0;
  if (s[end] === '.' && digit(s, end + 1) >= 0) {
    let k = end + 1;
    let scale = 100;
    while (digit(s, k) >= 0) {
      if (scale >= 1) ms += digit(s, k) * scale;
      scale /= 10;
      k++;
    }
    end = k;
    ms = Math.floor(ms);
  }
  let y = new Date(reference).getFullYear();
  let time = Date.UTC(y, mo - 1, d, h, mi, sec, ms) + localOffset(y, mo, d, h);
  if (time > reference + 86_400_000) {
    y -= 1;
    time = Date.UTC(y, mo - 1, d, h, mi, sec, ms) + localOffset(y, mo, d, h);
  }
  return { time, end };
}

const UNITS: Readonly<Record<string, number>> = {
  s: 1000, sec: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
  w: 604_800_000, week: 604_800_000, weeks: 604_800_000,
};

/** `15m`, `2h`, `1 day`, `90s`: a duration in ms, or undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = UNITS[(m[2] as string).toLowerCase()];
  if (unit === undefined) return undefined;
  const ms = Number(m[1]) * unit;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * A point in time as a user gives it: a duration back from now (`15m`, `2h`, `7d`), an ISO 8601
 * date or date-time (local time without a zone), or `now`. Undefined when it is neither.
 */
export function parsePointInTime(text: string, now = Date.now()): number | undefined {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === 'now') return now;
  const duration = parseDuration(trimmed);
  if (duration !== undefined) return now - duration;
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const [y, mo, d] = trimmed.split('-').map(Number) as [number, number, number];
    if (!valid(mo, d, 0, 0, 0)) return undefined;
    return new Date(y, mo - 1, d).getTime();
  }
  const iso = parseIsoAt(trimmed, 0);
  if (iso && iso.end === trimmed.length) return iso.time;
  // Minutes without seconds: 2024-01-15T10:30 or 2024-01-15 10:30.
  const short = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})$/.exec(trimmed);
  if (short) {
    const [, y, mo, d, h, mi] = short.map(Number) as [number, number, number, number, number, number];
    if (!valid(mo, d, h, mi, 0)) return undefined;
    return new Date(y, mo - 1, d, h, mi).getTime();
  }
  return undefined;
}

export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** `90s`, `15m`, `2h`, `3d`: the shortest exact spelling of a duration, for messages. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}
