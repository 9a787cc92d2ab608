/**
 * Reads the envelope of a JSON-RPC message (its top-level `id`, and whether it is a request or a
 * response) from the first and last few kilobytes of its text, for a message too large to keep.
 *
 * Both ends are needed: the Python SDK writes `{"jsonrpc":"2.0","id":1,"method":...}`, while the
 * TypeScript SDK writes `{"method":...,"params":{...},"jsonrpc":"2.0","id":1}`, so for a 50 MB
 * request from the most common client the id is only in the last bytes.
 *
 * Only top-level members count (a nested `"id"` inside `params` is not the request's id), and a
 * scan that runs off the kept text stops without guessing.
 */

export type JsonRpcId = string | number;

export interface Envelope {
  /** The top-level id, when one of the two ends shows it and it is a string or a number. */
  id: JsonRpcId | undefined;
  /** Top-level member names seen (`method`, `result`, `error`, `params`, `jsonrpc`, `id`, ...). */
  keys: Set<string>;
}

/** What the envelope says the message is; `unknown` when neither end shows method, result or error. */
export function envelopeKind(envelope: Envelope): 'request' | 'response' | 'unknown' {
  if (envelope.keys.has('method')) return 'request';
  if (envelope.keys.has('result') || envelope.keys.has('error')) return 'response';
  return 'unknown';
}

/** Scans `head` (the start of the message) forwards and `tail` (its end) backwards. */
export function readEnvelope(head: string, tail: string): Envelope {
  const keys = new Set<string>();
  const ids: unknown[] = [];
  const record = (key: string, valueText: string | undefined): void => {
    keys.add(key);
    if (key === 'id' && valueText !== undefined) ids.push(parseScalar(valueText));
  };
  scanForward(head, record);
  scanBackward(tail, record);
  const id = ids.find((v): v is JsonRpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));
  return { id, keys };
}

function parseScalar(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** Thrown internally when a scan reaches the end of the text it has (or meets something that is not JSON). */
class OutOfText extends Error {}

function scanForward(text: string, record: (key: string, valueText: string | undefined) => void): void {
  let i = 0;
  const skipWs = (): void => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
    if (i >= text.length) throw new OutOfText();
  };
  /** Index just past the string starting at i (a quote). */
  const stringEnd = (at: number): number => {
    for (let j = at + 1; j < text.length; j++) {
      const c = text[j];
      if (c === '\\') j++;
      else if (c === '"') return j + 1;
    }
    throw new OutOfText();
  };
  /** Index just past the value starting at i. */
  const valueEnd = (at: number): number => {
    const c = text[at];
    if (c === '"') return stringEnd(at);
    if (c === '{' || c === '[') {
      let depth = 0;
      for (let j = at; j < text.length; j++) {
        const d = text[j];
        if (d === '"') {
          j = stringEnd(j) - 1;
        } else if (d === '{' || d === '[') {
          depth++;
        } else if (d === '}' || d === ']') {
          if (--depth === 0) return j + 1;
        }
      }
      throw new OutOfText();
    }
    let j = at;
    while (j < text.length && /[-+.0-9a-zA-Z]/.test(text[j]!)) j++;
    if (j === at || j >= text.length) throw new OutOfText();
    return j;
  };
  try {
    skipWs();
    if (text[i] !== '{') return;
    i++;
    for (;;) {
      skipWs();
      if (text[i] === '}') return;
      if (text[i] !== '"') return;
      const keyEnd = stringEnd(i);
      const key = parseScalar(text.slice(i, keyEnd));
      i = keyEnd;
      skipWs();
      if (text[i] !== ':') return;
      // The name counts even when its value runs past the kept text ("params" of a huge request).
      if (typeof key === 'string') record(key, undefined);
      i++;
      skipWs();
      const end = valueEnd(i);
      if (typeof key === 'string') record(key, text.slice(i, end));
      i = end;
      skipWs();
      if (text[i] === ',') {
        i++;
        continue;
      }
      return;
    }
  } catch (error) {
    if (!(error instanceof OutOfText)) throw error;
  }
}

function scanBackward(text: string, record: (key: string, valueText: string | undefined) => void): void {
  let i = text.length - 1;
  const skipWs = (): void => {
    while (i >= 0 && WHITESPACE.has(text[i]!)) i--;
    if (i < 0) throw new OutOfText();
  };
  /**
   * Whether the quote at `at` is escaped. A run of backslashes that reaches the start of the kept
   * text could continue before it, so that case is undecidable and ends the scan.
   */
  const escaped = (at: number): boolean => {
    let k = at - 1;
    while (k >= 0 && text[k] === '\\') k--;
    if (k < 0) throw new OutOfText();
    return (at - 1 - k) % 2 === 1;
  };
  /** Index of the opening quote of the string whose closing quote is at `at`. */
  const stringStart = (at: number): number => {
    for (let j = at - 1; j >= 0; j--) if (text[j] === '"' && !escaped(j)) return j;
    throw new OutOfText();
  };
  /** Index of the first character of the value that ends at `at`. */
  const valueStart = (at: number): number => {
    const c = text[at];
    if (c === '"') return stringStart(at);
    if (c === '}' || c === ']') {
      let depth = 0;
      for (let j = at; j >= 0; j--) {
        const d = text[j];
        if (d === '"') {
          j = stringStart(j);
        } else if (d === '}' || d === ']') {
          depth++;
        } else if (d === '{' || d === '[') {
          if (--depth === 0) return j;
        }
      }
      throw new OutOfText();
    }
    let j = at;
    while (j >= 0 && /[-+.0-9a-zA-Z]/.test(text[j]!)) j--;
    if (j === at || j < 0) throw new OutOfText();
    return j + 1;
  };
  try {
    skipWs();
    if (text[i] !== '}') return;
    i--;
    for (;;) {
      skipWs();
      if (text[i] === '{') return;
      const valueEnd = i;
      const start = valueStart(i);
      const valueText = text.slice(start, valueEnd + 1);
      i = start - 1;
      skipWs();
      if (text[i] !== ':') return;
      i--;
      skipWs();
      if (text[i] !== '"') return;
      const keyStart = stringStart(i);
      const key = parseScalar(text.slice(keyStart, i + 1));
      if (typeof key === 'string') record(key, valueText);
      i = keyStart - 1;
      skipWs();
      if (text[i] === ',') {
        i--;
        continue;
      }
      return;
    }
  } catch (error) {
    if (!(error instanceof OutOfText)) throw error;
  }
}
