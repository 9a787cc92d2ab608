/**
 * Conversion of PostgreSQL text-format values into JSON-safe values. Applied by our own row
 * reader (never by mutating pg's global type table), so nothing else in the process changes behaviour.
 *
 * Rules: integers that fit a double become numbers; int8 and numeric stay strings (they would
 * lose precision); bytea becomes base64; timestamps become ISO 8601; json/jsonb are parsed;
 * arrays of the above keep their structure; every other type is PostgreSQL's own text.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
type Parse = (text: string) => JsonValue;

const asString: Parse = (text) => text;
const asInteger: Parse = (text) => Number(text);
const asFloat: Parse = (text) => {
  const n = Number(text);
  // NaN and ±Infinity have no JSON form; keep PostgreSQL's spelling.
  return Number.isFinite(n) ? n : text;
};
const asBoolean: Parse = (text) => text === 't';
const asJson: Parse = (text) => JSON.parse(text) as JsonValue;
const asBase64: Parse = (text) => {
  if (text.startsWith('\\x')) return Buffer.from(text.slice(2), 'hex').toString('base64');
  return Buffer.from(unescapeBytea(text), 'latin1').toString('base64');
};
const asTimestamp: Parse = (text) => {
  // "2024-05-01 12:00:00.5+02" -> "2024-05-01T12:00:00.5+02:00"; infinity and BC dates stay as they are.
  const match = /^(\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2})?(?::?(\d{2}))?(?::(\d{2}))?$/.exec(text);
  if (!match) return text;
  const [, date, time, offsetHours, offsetMinutes, offsetSeconds] = match;
  if (offsetHours === undefined) return `${date}T${time}`;
  if (offsetSeconds !== undefined) return text;
  const offset = `${offsetHours}:${offsetMinutes ?? '00'}`;
  return `${date}T${time}${offset === '+00:00' ? 'Z' : offset}`;
};

const SCALARS = new Map<number, Parse>([
  [16, asBoolean],
  [17, asBase64],
  [20, asString],
  [21, asInteger],
  [23, asInteger],
  [26, asInteger],
  [114, asJson],
  [700, asFloat],
  [701, asFloat],
  [1114, asTimestamp],
  [1184, asTimestamp],
  [1700, asString],
  [3802, asJson],
]);

/** Array type oid -> element type oid, for the builtin types whose elements we convert. */
const ARRAYS = new Map<number, number>([
  [1000, 16],
  [1001, 17],
  [1005, 21],
  [1007, 23],
  [1016, 20],
  [1021, 700],
  [1022, 701],
  [1028, 26],
  [199, 114],
  [1115, 1114],
  [1185, 1184],
  [1231, 1700],
  [3807, 3802],
  [1009, 25],
  [1015, 1043],
  [1014, 1042],
  [1182, 1082],
  [2951, 2950],
  [1183, 1083],
  [1187, 1186],
]);

export function parserFor(oid: number): Parse {
  const scalar = SCALARS.get(oid);
  if (scalar) return scalar;
  const element = ARRAYS.get(oid);
  if (element !== undefined) {
    const parseElement = SCALARS.get(element) ?? asString;
    return (text) => parseArrayLiteral(text, parseElement);
  }
  return asString;
}

/**
 * Parses an array literal such as {1,2,NULL}, {"a b","c\"d"} or [0:1]={{1,2},{3,4}}. Written
 * here because pg-types' array parser is not a dependency we may import directly.
 */
export function parseArrayLiteral(text: string, parseElement: Parse): JsonValue {
  let i = 0;
  if (text.startsWith('[')) i = text.indexOf('=') + 1;
  const parseLevel = (): JsonValue[] => {
    const out: JsonValue[] = [];
    if (text[i] !== '{') throw new Error('malformed array literal');
    i += 1;
    if (text[i] === '}') {
      i += 1;
      return out;
    }
    for (;;) {
      const ch = text[i];
      if (ch === '{') {
        out.push(parseLevel());
      } else if (ch === '"') {
        i += 1;
        let value = '';
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i += 1;
          value += text[i] ?? '';
          i += 1;
        }
        i += 1;
        out.push(parseElement(value));
      } else {
        let end = i;
        // Element separator is ',' for every builtin type except box (';'), which we leave as text.
        while (end < text.length && text[end] !== ',' && text[end] !== '}') end += 1;
        const raw = text.slice(i, end);
        i = end;
        out.push(raw === 'NULL' ? null : parseElement(raw));
      }
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text[i] === '}') {
        i += 1;
        return out;
      }
      throw new Error('malformed array literal');
    }
  };
  try {
    return parseLevel();
  } catch {
    return text;
  }
}

/** bytea "escape" output format: \\ and \ooo octal escapes. */
function unescapeBytea(text: string): string {
  return text.replace(/\\(\\|[0-7]{3})/g, (_m, code: string) => (code === '\\' ? '\\' : String.fromCharCode(parseInt(code, 8))));
}

/** Names of common types, so that most results need no catalog lookup. */
export const BUILTIN_TYPE_NAMES = new Map<number, string>([
  [16, 'boolean'],
  [17, 'bytea'],
  [18, '"char"'],
  [19, 'name'],
  [20, 'bigint'],
  [21, 'smallint'],
  [23, 'integer'],
  [25, 'text'],
  [26, 'oid'],
  [114, 'json'],
  [142, 'xml'],
  [700, 'real'],
  [701, 'double precision'],
  [1042, 'character'],
  [1043, 'character varying'],
  [1082, 'date'],
  [1083, 'time without time zone'],
  [1114, 'timestamp without time zone'],
  [1184, 'timestamp with time zone'],
  [1186, 'interval'],
  [1266, 'time with time zone'],
  [1700, 'numeric'],
  [2950, 'uuid'],
  [3802, 'jsonb'],
  [1000, 'boolean[]'],
  [1001, 'bytea[]'],
  [1005, 'smallint[]'],
  [1007, 'integer[]'],
  [1009, 'text[]'],
  [1015, 'character varying[]'],
  [1016, 'bigint[]'],
  [1021, 'real[]'],
  [1022, 'double precision[]'],
  [1231, 'numeric[]'],
  [3807, 'jsonb[]'],
  [199, 'json[]'],
  [1115, 'timestamp without time zone[]'],
  [1185, 'timestamp with time zone[]'],
  [1182, 'date[]'],
  [2951, 'uuid[]'],
  [705, 'unknown'],
  [2249, 'record'],
  [2278, 'void'],
]);
