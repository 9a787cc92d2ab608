/**
 * Finding text in raw bytes at memory speed, before anything is decoded. `Buffer.indexOf(needle)`
 * runs at about 2 GB/s; `indexOf(byte)` is memchr, several times faster. So the needle is anchored
 * on its rarest byte (by the byte frequencies of the first chunk looked at: in a log, "Z" ends every
 * timestamp while "X" may never occur), and only the few places where that byte occurs are
 * compared with the whole needle. Case-insensitive search of ASCII text looks for both cases of
 * the anchor. A leaf module: the worker thread uses it.
 */

/** Past this share of the bytes, an anchor byte is too common for the memchr loop to pay: plain indexOf then. */
const MAX_ANCHOR_SHARE = 1 / 256;
const SAMPLE_BYTES = 256 * 1024;

function isAsciiLetter(b: number): boolean {
  return (b >= 65 && b <= 90) || (b >= 97 && b <= 122);
}

export class ByteFinder {
  private readonly needle: Buffer;
  private anchor = -1;
  private anchorBytes: number[] = [];
  private useIndexOf = false;

  private constructor(
    text: string,
    private readonly caseInsensitive: boolean,
  ) {
    this.needle = Buffer.from(caseInsensitive ? text.toLowerCase() : text, 'utf8');
  }

  /** Undefined when bytes cannot decide it (case-insensitive non-ASCII text) or there is nothing to find. */
  static for(text: string, caseInsensitive: boolean): ByteFinder | undefined {
    if (text.length === 0) return undefined;
    // eslint-disable-next-line no-control-regex
    if (caseInsensitive && !/^[\x00-\x7f]*$/.test(text)) return undefined;
    return new ByteFinder(text, caseInsensitive);
  }

  /** True when the needle occurs somewhere in buf. */
  occursIn(buf: Buffer): boolean {
    if (this.anchor === -1) this.chooseAnchor(buf);
    if (this.useIndexOf) return buf.indexOf(this.needle) !== -1;
    const k = this.anchor;
    const last = buf.length - this.needle.length;
    for (const b of this.anchorBytes) {
      for (let i = buf.indexOf(b, k); i !== -1; i = buf.indexOf(b, i + 1)) {
        const start = i - k;
        if (start > last) break;
        if (this.matchesAt(buf, start)) return true;
      }
    }
    return false;
  }

  private matchesAt(buf: Buffer, start: number): boolean {
    const needle = this.needle;
    if (!this.caseInsensitive) return buf.compare(needle, 0, needle.length, start, start + needle.length) === 0;
    for (let j = 0; j < needle.length; j++) {
      const b = buf[start + j] as number;
      if ((isAsciiLetter(b) ? b | 0x20 : b) !== (needle[j] as number)) return false;
    }
    return true;
  }

  private chooseAnchor(sample: Buffer): void {
    const counts = new Uint32Array(256);
    const n = Math.min(sample.length, SAMPLE_BYTES);
    for (let i = 0; i < n; i++) {
      const b = sample[i] as number;
      counts[b] = (counts[b] as number) + 1;
    }
    const frequency = (b: number): number => (this.caseInsensitive && isAsciiLetter(b) ? (counts[b | 0x20] as number) + (counts[b & ~0x20] as number) : (counts[b] as number));
    let best = 0;
    for (let j = 1; j < this.needle.length; j++) if (frequency(this.needle[j] as number) < frequency(this.needle[best] as number)) best = j;
    const b = this.needle[best] as number;
    this.anchor = best;
    this.anchorBytes = this.caseInsensitive && isAsciiLetter(b) ? [b | 0x20, b & ~0x20] : [b];
    this.useIndexOf = !this.caseInsensitive && n > 0 && frequency(b) / n > MAX_ANCHOR_SHARE;
  }
}

/** Skips a quantifier at i (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy); returns where it ends and whether it allows zero. */
function quantifierAt(source: string, i: number): { end: number; optional: boolean } | undefined {
  const c = source[i];
  let end: number;
  let optional: boolean;
  if (c === '*' || c === '?') {
    end = i + 1;
    optional = true;
  } else if (c === '+') {
    end = i + 1;
    optional = false;
  } else if (c === '{') {
    const m = /^\{(\d+)(,\d*)?\}/.exec(source.slice(i));
    if (!m) return undefined;
    end = i + m[0].length;
    optional = Number(m[1]) === 0;
  } else return undefined;
  if (source[end] === '?') end++;
  return { end, optional };
}

/** Where an escape sequence starting at i (a backslash) ends. */
function escapeEnd(source: string, i: number): number {
  const c = source[i + 1];
  if (c === 'x') return i + 4;
  if (c === 'c') return i + 3;
  if ((c === 'u' || c === 'p' || c === 'P') && source[i + 2] === '{') {
    const close = source.indexOf('}', i + 3);
    return close === -1 ? source.length : close + 1;
  }
  if (c === 'u') return i + 6;
  if (c === 'k' && source[i + 2] === '<') {
    const close = source.indexOf('>', i + 3);
    return close === -1 ? source.length : close + 1;
  }
  if (c !== undefined && c >= '1' && c <= '9') {
    let k = i + 2;
    while (k < source.length && (source[k] as string) >= '0' && (source[k] as string) <= '9') k++;
    return k;
  }
  return i + 2;
}

/**
 * The longest piece of plain text every match of a regular expression must contain, so chunks
 * without it are skipped without decoding. Conservative: anything inside a group, a class, an
 * escape that is not escaped punctuation, or a character a quantifier may leave out breaks a
 * piece; an alternation outside groups means there is none.
 */
export function requiredLiteral(source: string): string | undefined {
  const pieces: string[] = [];
  let current = '';
  let depth = 0;
  let i = 0;
  const cut = (): void => {
    if (current.length > 0) pieces.push(current);
    current = '';
  };
  const atom = (char: string | undefined, next: number): void => {
    const q = quantifierAt(source, next);
    if (q) {
      if (char !== undefined && !q.optional && depth === 0) current += char;
      cut();
      i = q.end;
      return;
    }
    if (char !== undefined && depth === 0) current += char;
    else cut();
    i = next;
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\\') {
      const next = source[i + 1];
      if (next !== undefined && /[.*+?^${}()|[\]\\/\-=!:<>#&~,'"%@`;_ ]/.test(next)) atom(next, i + 2);
      else atom(undefined, escapeEnd(source, i));
    } else if (c === '[') {
      let k = i + 1;
      if (source[k] === '^') k++;
      if (source[k] === ']') k++;
      while (k < source.length && source[k] !== ']') k += source[k] === '\\' ? 2 : 1;
      atom(undefined, k + 1);
    } else if (c === '(') {
      cut();
      depth++;
      i++;
    } else if (c === ')') {
      depth--;
      atom(undefined, i + 1);
    } else if (c === '|') {
      if (depth === 0) return undefined;
      i++;
    } else if (c === '.' || c === '^' || c === '$') {
      atom(undefined, i + 1);
    } else {
      atom(c, i + 1);
    }
  }
  cut();
  return pieces.sort((a, b) => b.length - a.length)[0];
}
