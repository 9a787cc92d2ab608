import { findLevel, levelFromNumber, levelFromSyslogPriority, levelFromWord, type Level } from '../levels.js';
import { parseClfAt, parseIsoAt, parseSyslogDateAt } from '../timestamps.js';

/**
 * One parser per log format. A parser looks at one line and says whether it starts an entry
 * (and then its time, level and message) or continues the previous one (a stack trace line, a
 * wrapped message). A leaf of the package apart from levels and timestamps: the worker thread
 * runs the same parsers as the main thread.
 */

export const LOG_FORMATS = [
  'json',
  'cri',
  'syslog-rfc5424',
  'apache-combined',
  'apache-common',
  'logfmt',
  'nginx-error',
  'syslog-rfc3164',
  'iso8601',
  'plain',
] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const FORMAT_DESCRIPTIONS: Readonly<Record<LogFormat, string>> = {
  json: 'JSON lines',
  cri: 'Kubernetes container log (CRI)',
  'syslog-rfc5424': 'syslog (RFC 5424)',
  'apache-combined': 'Apache/nginx combined access log',
  'apache-common': 'Apache/nginx common access log',
  logfmt: 'logfmt (key=value)',
  'nginx-error': 'nginx error log',
  'syslog-rfc3164': 'syslog (RFC 3164)',
  iso8601: 'text with ISO 8601 timestamps',
  plain: 'plain text without timestamps',
};

export interface EntryHead {
  /** Milliseconds since the epoch, when the line says. */
  time: number | undefined;
  level: Level | undefined;
  /** The message without its timestamp and level: what similar entries have in common. */
  message: string;
  /** The entry's fields, for formats that have them (JSON lines, logfmt): what `fields` filters and `group_by` read. */
  record?: Record<string, unknown>;
}

/** Field names tried, in order, for JSON lines; the first present wins. */
export interface JsonFields {
  time: readonly string[];
  level: readonly string[];
  message: readonly string[];
}

export const DEFAULT_JSON_FIELDS: JsonFields = {
  time: ['timestamp', 'time', '@timestamp', 'ts', 't', 'datetime', 'date', 'eventTime', 'asctime', 'timeUnixNano', 'time_unix_nano', 'Timestamp', 'observedTimeUnixNano'],
  level: ['level', 'severity', 'lvl', 'levelname', 'log.level', 'loglevel', '@level', 'severity_text', 'severityText', 'SeverityText'],
  message: ['message', 'msg', '@message', 'text', 'event', 'log', 'body.stringValue', 'body', 'Body'],
};

/** How a file is read: its format plus what the operator configured. Plain data: it crosses to the worker. */
export interface FormatSpec {
  format: LogFormat;
  json: JsonFields;
  /** The operator's line-start pattern (--entry-pattern), overriding the format's own notion of an entry start. */
  entryPattern?: string;
  /** The file's modification time: the year RFC 3164 timestamps leave out. */
  reference: number;
}

export interface LineParser {
  readonly format: LogFormat;
  /**
   * The entry this line starts, or undefined when it continues the previous entry. With
   * `withMessage` false the message may be left empty: a statistics pass over millions of lines
   * asks for it only for the errors it groups.
   */
  head(line: string, withMessage?: boolean): EntryHead | undefined;
}

const MAX_MESSAGE = 2000;

function isSpace(code: number): boolean {
  return code === 32 || code === 9;
}

/** Skips separators that sit between a timestamp, a level and the message: ` `, `]`, `[`, `|`, `-`, `:`. */
function skipSeparators(line: string, i: number): number {
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9 || c === 93 || c === 91 || c === 124 || c === 45 || c === 58) i++;
    else break;
  }
  return i;
}

/** The level word right after position i (`INFO`, `[error]`, `WARN:`) or anywhere early in the rest. */
function levelAfter(line: string, i: number): { level: Level | undefined; messageStart: number } {
  const start = skipSeparators(line, i);
  let end = start;
  while (end < line.length && end - start < 14) {
    const c = line.charCodeAt(end) | 32;
    if (c < 97 || c > 122) break;
    end++;
  }
  const direct = end > start ? levelFromWord(line.slice(start, end)) : undefined;
  if (direct) return { level: direct, messageStart: skipSeparators(line, end) };
  const found = findLevel(line, i);
  if (found) return { level: found.level, messageStart: skipSeparators(line, found.end) };
  return { level: undefined, messageStart: start };
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? text.slice(0, MAX_MESSAGE) : text;
}

/** Lines of free text: an entry starts with a line that does not start with whitespace. */
const plain: LineParser = {
  format: 'plain',
  head(line, withMessage = true) {
    if (line.length === 0 || isSpace(line.charCodeAt(0))) return undefined;
    if (line.startsWith('Caused by:') || line.startsWith('Traceback (')) return undefined;
    const found = findLevel(line);
    if (!withMessage) return { time: undefined, level: found?.level, message: '' };
    return { time: undefined, level: found?.level, message: clip(found && found.end < 40 ? line.slice(skipSeparators(line, found.end)) : line) };
  },
};

/** Text whose entries start with an ISO 8601 timestamp, optionally in brackets; nginx error logs too. */
function isoParser(format: 'iso8601' | 'nginx-error'): LineParser {
  return {
    format,
    head(line, withMessage = true) {
      const at = line.charCodeAt(0) === 91 ? 1 : 0;
      const parsed = parseIsoAt(line, at);
      if (!parsed) return undefined;
      if (format === 'nginx-error' && (line[at + 4] !== '/' || line[parsed.end + 1] !== '[')) return undefined;
      const { level, messageStart } = levelAfter(line, parsed.end);
      return { time: parsed.time, level, message: withMessage ? clip(line.slice(messageStart)) : '' };
    },
  };
}

/** `<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG` */
const rfc5424: LineParser = {
  format: 'syslog-rfc5424',
  head(line) {
    if (line.charCodeAt(0) !== 60) return undefined;
    const close = line.indexOf('>', 1);
    if (close < 2 || close > 4 || line[close + 1] !== '1' || line[close + 2] !== ' ') return undefined;
    const pri = Number(line.slice(1, close));
    if (!Number.isInteger(pri) || pri > 191) return undefined;
    let i = close + 3;
    let time: number | undefined;
    if (line[i] === '-') i += 1;
    else {
      const parsed = parseIsoAt(line, i);
      if (!parsed) return undefined;
      time = parsed.time;
      i = parsed.end;
    }
    // HOST APP PROCID MSGID
    for (let field = 0; field < 4; field++) {
      if (line[i] !== ' ') return undefined;
      const next = line.indexOf(' ', i + 1);
      if (next === -1) return { time, level: levelFromSyslogPriority(pri), message: '' };
      i = next;
    }
    i += 1;
    // Structured data: "-" or one or more [id param="value"] elements (values may hold an escaped ]).
    if (line[i] === '-') i += 1;
    else {
      while (line[i] === '[') {
        let k = i + 1;
        while (k < line.length && line[k] !== ']') k += line[k] === '\\' ? 2 : 1;
        i = k + 1;
      }
    }
    let message = line.slice(i).trimStart();
    if (message.charCodeAt(0) === 0xfeff) message = message.slice(1);
    return { time, level: levelFromSyslogPriority(pri), message: clip(message) };
  },
};

/** `sshd[2201]: error: …` gives error. */
function levelAfterTag(rest: string): Level | undefined {
  const tagEnd = rest.indexOf(': ');
  if (tagEnd === -1 || tagEnd > 64) return undefined;
  const m = /^([A-Za-z]{3,9}):/.exec(rest.slice(tagEnd + 2, tagEnd + 14));
  return m ? levelFromWord(m[1] as string) : undefined;
}

/** `[<PRI>]Mmm dd hh:mm:ss HOST TAG[PID]: MSG` */
function rfc3164(reference: number): LineParser {
  return {
    format: 'syslog-rfc3164',
    head(line) {
      let i = 0;
      let pri: number | undefined;
      if (line.charCodeAt(0) === 60) {
        const close = line.indexOf('>', 1);
        if (close < 2 || close > 4) return undefined;
        pri = Number(line.slice(1, close));
        if (!Number.isInteger(pri)) return undefined;
        i = close + 1;
      }
      const parsed = parseSyslogDateAt(line, i, reference);
      if (!parsed || line[parsed.end] !== ' ') return undefined;
      const hostEnd = line.indexOf(' ', parsed.end + 1);
      const rest = hostEnd === -1 ? '' : line.slice(hostEnd + 1);
      // The tag (program[pid]:) is part of what groups similar messages; the level is in PRI, or in
      // the text: a word such as "error:" right after the tag (sshd, postfix), or anywhere as for other text.
      const level = pri !== undefined ? levelFromSyslogPriority(pri) : (levelAfterTag(rest) ?? findLevel(rest)?.level);
      return { time: parsed.time, level, message: clip(rest) };
    },
  };
}

/** `host ident user [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326` plus, combined, `"referer" "agent"`. */
function accessLog(format: 'apache-combined' | 'apache-common'): LineParser {
  return {
    format,
    head(line) {
      const open = line.indexOf(' [');
      if (open < 1 || open > 300) return undefined;
      const parsed = parseClfAt(line, open + 2);
      if (!parsed || line[parsed.end] !== ']' || line[parsed.end + 1] !== ' ' || line[parsed.end + 2] !== '"') return undefined;
      let k = parsed.end + 3;
      while (k < line.length && line[k] !== '"') k += line[k] === '\\' ? 2 : 1;
      if (k >= line.length) return undefined;
      const request = line.slice(parsed.end + 3, k);
      const status = Number(line.slice(k + 2, k + 5));
      if (line[k + 1] !== ' ' || !Number.isInteger(status) || status < 100 || status > 599) return undefined;
      if (format === 'apache-combined') {
        const bytesEnd = line.indexOf(' ', k + 6);
        if (bytesEnd === -1 || line[bytesEnd + 1] !== '"') return undefined;
      }
      const level: Level = status >= 500 ? 'error' : status >= 400 ? 'warning' : 'info';
      return { time: parsed.time, level, message: clip(`${status} ${request}`) };
    },
  };
}

/** One logfmt value at i: a quoted string (with escapes) or a bare word; returns it and where it ends. */
function logfmtValue(line: string, i: number): { value: string; end: number } {
  if (line[i] === '"') {
    let k = i + 1;
    let out = '';
    while (k < line.length && line[k] !== '"') {
      if (line[k] === '\\' && k + 1 < line.length) {
        const e = line[k + 1] as string;
        out += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        k += 2;
      } else out += line[k++];
    }
    return { value: out, end: k + 1 };
  }
  let k = i;
  while (k < line.length && !isSpace(line.charCodeAt(k))) k++;
  return { value: line.slice(i, k), end: k };
}

const LOGFMT_TIME = new Set(['time', 'ts', 't', 'timestamp', 'date']);
const LOGFMT_LEVEL = new Set(['level', 'lvl', 'severity']);
const LOGFMT_MESSAGE = new Set(['msg', 'message']);

/** `time=2024-01-15T10:00:00Z level=info msg="listening" port=8080` (Go's logrus, slog, Heroku). */
const logfmt: LineParser = {
  format: 'logfmt',
  head(line) {
    const firstEq = line.indexOf('=');
    if (firstEq < 1 || firstEq > 32 || !/^[A-Za-z_][\w.-]*$/.test(line.slice(0, firstEq))) return undefined;
    let time: number | undefined;
    let level: Level | undefined;
    let message: string | undefined;
    let i = 0;
    let pairs = 0;
    const record: Record<string, unknown> = {};
    while (i < line.length && pairs < 64) {
      while (i < line.length && isSpace(line.charCodeAt(i))) i++;
      const eq = line.indexOf('=', i);
      if (eq === -1) break;
      const key = line.slice(i, eq);
      if (key.length === 0 || /\s/.test(key)) break;
      const { value, end } = logfmtValue(line, eq + 1);
      pairs++;
      if (!(key in record)) record[key] = value;
      if (time === undefined && LOGFMT_TIME.has(key)) time = parseIsoAt(value, 0)?.time;
      else if (level === undefined && LOGFMT_LEVEL.has(key)) level = levelFromWord(value);
      else if (message === undefined && LOGFMT_MESSAGE.has(key)) message = value;
      i = end;
    }
    if (pairs < 2 || (time === undefined && level === undefined)) return undefined;
    return { time, level, message: clip(message ?? line), record };
  },
};

/**
 * A field by name: a key as written (`log.level` in ECS), else a dotted path into nested objects
 * (`http.status`), where each step may itself be a dotted key (`attributes.service.name` with
 * `"attributes": {"service.name": …}`). The splits tried are bounded: a hostile record and name
 * cannot make it work exponentially.
 */
export function fieldOf(record: Record<string, unknown>, name: string): unknown {
  const budget = { steps: 256 };
  return lookup(record, name, budget);
}

function lookup(record: Record<string, unknown>, name: string, budget: { steps: number }): unknown {
  if (Object.hasOwn(record, name)) return record[name];
  for (let dot = name.indexOf('.'); dot !== -1 && budget.steps-- > 0; dot = name.indexOf('.', dot + 1)) {
    const inner = record[name.slice(0, dot)];
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner) || !Object.hasOwn(record, name.slice(0, dot))) continue;
    const found = lookup(inner as Record<string, unknown>, name.slice(dot + 1), budget);
    if (found !== undefined) return found;
  }
  return undefined;
}

function first(record: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) {
    const value = fieldOf(record, name);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

/** Epoch seconds, milliseconds, microseconds or nanoseconds, told apart by magnitude. */
function timeFromNumber(n: number): number | undefined {
  if (!Number.isFinite(n) || n <= 0) return undefined;
  if (n > 1e17) return Math.floor(n / 1e6);
  if (n > 1e14) return Math.floor(n / 1e3);
  if (n > 1e11) return n;
  return Math.round(n * 1000);
}

export function timeFromValue(value: unknown): number | undefined {
  if (typeof value === 'number') return timeFromNumber(value);
  if (typeof value !== 'string' || value.length < 8) return undefined;
  const iso = parseIsoAt(value, 0);
  if (iso) return iso.time;
  if (/^\d+(\.\d+)?$/.test(value)) return timeFromNumber(Number(value));
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** A JSON object's level, time and message by the configured field names, with the object as the entry's fields. */
function fromRecord(r: Record<string, unknown>, fields: JsonFields, line: string): EntryHead {
  const rawLevel = first(r, fields.level);
  const level = typeof rawLevel === 'number' ? levelFromNumber(rawLevel) : typeof rawLevel === 'string' ? levelFromWord(rawLevel) : undefined;
  const rawMessage = first(r, fields.message);
  const message = typeof rawMessage === 'string' ? rawMessage : rawMessage === undefined ? line : JSON.stringify(rawMessage);
  return { time: timeFromValue(first(r, fields.time)), level, message: clip(message), record: r };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 123) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  return record !== null && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>) : undefined;
}

/**
 * What a container wrote (the text of a Docker json-file or CRI line), with the runtime's stream
 * and time: the application's own JSON fields when it wrote JSON (the runtime's time when it has
 * none), else the level found in the text. `stream` (stdout or stderr) is a field either way.
 */
function containerEntry(text: string, stream: string, runtimeTime: number | undefined, fields: JsonFields, extra: Record<string, unknown>): EntryHead {
  const body = text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text;
  const inner = parseObject(body);
  if (inner) {
    const head = fromRecord(inner, fields, body);
    return { ...head, time: head.time ?? runtimeTime, record: { ...inner, stream, ...extra } };
  }
  return { time: runtimeTime, level: findLevel(body)?.level, message: clip(body), record: { stream, ...extra } };
}

function jsonParser(fields: JsonFields): LineParser {
  return {
    format: 'json',
    head(line) {
      const r = parseObject(line);
      if (!r) return undefined;
      // Docker's json-file driver: {"log": "<what the container wrote>\n", "stream": "stderr", "time": "…"}.
      if (typeof r.log === 'string' && (r.stream === 'stdout' || r.stream === 'stderr') && typeof r.time === 'string' && Object.keys(r).length <= 4) {
        return containerEntry(r.log, r.stream, timeFromValue(r.time), fields, typeof r.attrs === 'object' && r.attrs !== null ? { attrs: r.attrs } : {});
      }
      return fromRecord(r, fields, line);
    },
  };
}

/**
 * Kubernetes container logs (CRI): `<RFC 3339 time> <stdout|stderr> <P|F> <text>`. A line the
 * runtime split (P, partial) is an entry of its own here, its tag a field (`tag: "P"`).
 */
function criParser(fields: JsonFields): LineParser {
  return {
    format: 'cri',
    head(line) {
      const parsed = parseIsoAt(line, 0);
      if (!parsed || line.charCodeAt(parsed.end) !== 32) return undefined;
      let i = parsed.end + 1;
      const stream = line.startsWith('stdout ', i) ? 'stdout' : line.startsWith('stderr ', i) ? 'stderr' : undefined;
      if (!stream) return undefined;
      i += 7;
      const tag = line[i];
      if ((tag !== 'F' && tag !== 'P') || (line.length > i + 1 && line.charCodeAt(i + 1) !== 32)) return undefined;
      return containerEntry(line.slice(i + 2), stream, parsed.time, fields, { tag });
    },
  };
}

function baseParser(spec: FormatSpec): LineParser {
  switch (spec.format) {
    case 'json':
      return jsonParser(spec.json);
    case 'cri':
      return criParser(spec.json);
    case 'syslog-rfc5424':
      return rfc5424;
    case 'syslog-rfc3164':
      return rfc3164(spec.reference);
    case 'apache-combined':
    case 'apache-common':
      return accessLog(spec.format);
    case 'logfmt':
      return logfmt;
    case 'nginx-error':
    case 'iso8601':
      return isoParser(spec.format);
    case 'plain':
      return plain;
  }
}

/** The parser for a file; an operator's --entry-pattern decides where entries start, the format still reads them. */
export function parserFor(spec: FormatSpec): LineParser {
  const base = baseParser(spec);
  if (spec.entryPattern === undefined) return base;
  const start = new RegExp(spec.entryPattern);
  return {
    format: base.format,
    head(line, withMessage = true) {
      if (!start.test(line)) return undefined;
      return base.head(line, withMessage) ?? { time: undefined, level: findLevel(line)?.level, message: withMessage ? clip(line) : '' };
    },
  };
}

/** Parsers used to recognise a format, most specific first (ties go to the earlier one). */
export function candidateParsers(json: JsonFields, reference: number): LineParser[] {
  return LOG_FORMATS.filter((f) => f !== 'plain').map((format) => baseParser({ format, json, reference }));
}
