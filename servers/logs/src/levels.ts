/**
 * Severity levels, lowest first. One scale for every format: syslog's eight severities plus
 * `trace`, with application names mapped onto it (FATAL and PANIC are critical, SEVERE is error).
 * A leaf module: the worker thread imports it too.
 */
export const LEVELS = ['trace', 'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type Level = (typeof LEVELS)[number];

export const LEVEL_RANK: Readonly<Record<Level, number>> = Object.fromEntries(LEVELS.map((l, i) => [l, i])) as Record<Level, number>;

/** Names as they appear in logs (upper-cased), for every spelling we recognise. */
const WORDS: ReadonlyMap<string, Level> = new Map<string, Level>([
  ['TRACE', 'trace'],
  ['TRC', 'trace'],
  ['FINEST', 'trace'],
  ['FINER', 'trace'],
  ['DEBUG', 'debug'],
  ['DBG', 'debug'],
  ['FINE', 'debug'],
  ['INFO', 'info'],
  ['INF', 'info'],
  ['INFORMATION', 'info'],
  ['INFORMATIONAL', 'info'],
  ['NOTICE', 'notice'],
  ['WARN', 'warning'],
  ['WARNING', 'warning'],
  ['WRN', 'warning'],
  ['ERROR', 'error'],
  ['ERR', 'error'],
  ['SEVERE', 'error'],
  ['CRIT', 'critical'],
  ['CRITICAL', 'critical'],
  ['FATAL', 'critical'],
  ['PANIC', 'critical'],
  ['ALERT', 'alert'],
  ['EMERG', 'emergency'],
  ['EMERGENCY', 'emergency'],
]);

/** A level from a word in any case (`warn`, `ERROR`, `Fatal`), or undefined. */
export function levelFromWord(word: string): Level | undefined {
  if (word.length === 0 || word.length > 13) return undefined;
  // Most logs write levels in capitals: look up as written first, upper-case only on a miss.
  return WORDS.get(word) ?? WORDS.get(word.toUpperCase());
}

/** syslog severity 0..7 (the low three bits of PRI). */
const SYSLOG_SEVERITY: readonly Level[] = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];

export function levelFromSyslogPriority(pri: number): Level | undefined {
  return SYSLOG_SEVERITY[pri & 7];
}

/** pino and bunyan write numbers: 10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal. */
export function levelFromNumber(n: number): Level | undefined {
  if (!Number.isFinite(n)) return undefined;
  if (n >= 60) return 'critical';
  if (n >= 50) return 'error';
  if (n >= 40) return 'warning';
  if (n >= 30) return 'info';
  if (n >= 20) return 'debug';
  if (n >= 10) return 'trace';
  return undefined;
}

export function atLeast(level: Level | undefined, threshold: Level | undefined): boolean {
  if (threshold === undefined) return true;
  return level !== undefined && LEVEL_RANK[level] >= LEVEL_RANK[threshold];
}

/**
 * Upper-case level words, or any-case ones in brackets or after `level=`: a message that merely
 * mentions "error" in lower case is not an error entry.
 */
const KEYWORD = /\b(TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|SEVERE|CRIT(?:ICAL)?|FATAL|PANIC|ALERT|EMERG(?:ENCY)?)\b|[[<(]\s*([A-Za-z]{3,13})\s*[\])>]|\b(?:level|lvl|severity)=["']?([A-Za-z]{3,13})/;

/** Where a level word sits in a line of free text (first 160 characters), if it has one. */
export function findLevel(text: string, from = 0): { level: Level; end: number } | undefined {
  const window = from === 0 && text.length <= 160 ? text : text.slice(from, from + 160);
  const m = KEYWORD.exec(window);
  if (!m) return undefined;
  const word = m[1] ?? m[2] ?? m[3] ?? '';
  const level = levelFromWord(word);
  if (!level) {
    // "[main]" is a thread name, not a level: look further along.
    const next = m.index + m[0].length;
    if (next >= window.length) return undefined;
    const rest = findLevel(window, next);
    return rest ? { level: rest.level, end: from + rest.end } : undefined;
  }
  return { level, end: from + m.index + m[0].length };
}
