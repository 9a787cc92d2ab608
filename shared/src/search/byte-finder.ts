/**
 * Finding text in raw bytes at memory speed, before anything is decoded. `Buffer.indexOf(needle)`
 * runs at about 3 GB/s; `indexOf(byte)` is memchr, several times faster. So the needle is anchored
 * on its rarest byte (by the byte frequencies of the first buffer looked at: in a log, "Z" ends
 * every timestamp while "X" may never occur), and only the few places where that byte occurs are
 * compared with the whole needle. Case-insensitive search of ASCII text looks for both cases of
 * the anchor. A leaf module: worker threads use it.
 */

/**
 * Past this share of the bytes, an anchor byte is too common for the memchr loop to pay: each hit
 * costs a call back into C++ (hundreds of nanoseconds), while `indexOf(needle)` skips through text
 * at a few GB/s. Measured on C headers and logs: an anchor at 1 in 440 bytes made the loop three
 * times slower than indexOf; at 1 in 10,000 and rarer (most literals in logs) the loop is faster.
 */
const MAX_ANCHOR_SHARE = 1 / 4096;
const SAMPLE_BYTES = 256 * 1024;

/**
 * What a byte's frequency is assumed to be before the sample says (a small first file says little):
 * English letters by their frequency in text, capitals rarer, then digits and common punctuation;
 * worth PRIOR_BYTES of sample.
 */
const PRIOR_BYTES = 4096;
const PRIOR: Uint32Array = (() => {
  const weights = new Float64Array(256);
  for (let b = 0x20; b < 0x7f; b++) weights[b] = 0.5;
  const letters = 'etaoinsrhldcumfpgwybvkxjqz';
  for (let i = 0; i < letters.length; i++) {
    const w = 12 / (1 + i * 0.6);
    weights[letters.charCodeAt(i)] = w;
    weights[letters.charCodeAt(i) & ~0x20] = w / 8;
  }
  for (const c of ' \n\t') weights[c.charCodeAt(0)] = 16;
  for (const c of '0123456789.,;:()_=-"\'/{}*<>#') weights[c.charCodeAt(0)] = 2;
  const total = weights.reduce((a, b) => a + b, 0);
  return Uint32Array.from(weights, (w) => Math.round((w / total) * PRIOR_BYTES));
})();

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

  /**
   * Undefined when bytes cannot decide it: case-insensitive non-ASCII text, text with a lone
   * surrogate or U+FFFD (decoding writes U+FFFD for bytes that are not UTF-8, so the text can be
   * in a line whose bytes do not hold it), or nothing to find.
   */
  static for(text: string, caseInsensitive: boolean): ByteFinder | undefined {
    if (text.length === 0) return undefined;
    // eslint-disable-next-line no-control-regex
    if (caseInsensitive && !/^[\x00-\x7f]*$/.test(text)) return undefined;
    if (/[\ud800-\udfff\ufffd]/.test(text)) return undefined;
    return new ByteFinder(text, caseInsensitive);
  }

  /** Length of the needle in bytes. */
  get length(): number {
    return this.needle.length;
  }

  /** True when the needle occurs somewhere in buf. */
  occursIn(buf: Uint8Array): boolean {
    return this.find(buf, 0) !== -1;
  }

  /** Where the needle first occurs in buf at or after `from`, or -1. */
  find(buf: Uint8Array, from: number): number {
    if (this.anchor === -1) this.chooseAnchor(buf);
    const bytes = buf instanceof Buffer ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.length);
    if (this.useIndexOf) return bytes.indexOf(this.needle, from);
    const k = this.anchor;
    const last = bytes.length - this.needle.length;
    let best = -1;
    for (const b of this.anchorBytes) {
      for (let i = bytes.indexOf(b, from + k); i !== -1; i = bytes.indexOf(b, i + 1)) {
        const start = i - k;
        if (start > last || (best !== -1 && start >= best)) break;
        if (this.matchesAt(bytes, start)) {
          best = start;
          break;
        }
      }
    }
    return best;
  }

  private matchesAt(buf: Buffer, start: number): boolean {
    const needle = this.needle;
    if (!this.caseInsensitive) {
      // The first and last bytes in JavaScript first: most anchor hits fail there, without a call into C++.
      const end = start + needle.length - 1;
      if (buf[start] !== needle[0] || buf[end] !== needle[needle.length - 1]) return false;
      return needle.length <= 2 || buf.compare(needle, 1, needle.length - 1, start + 1, end) === 0;
    }
    for (let j = 0; j < needle.length; j++) {
      const b = buf[start + j] as number;
      if ((isAsciiLetter(b) ? b | 0x20 : b) !== (needle[j] as number)) return false;
    }
    return true;
  }

  private chooseAnchor(sample: Uint8Array): void {
    const counts = Uint32Array.from(PRIOR);
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
    this.useIndexOf = !this.caseInsensitive && frequency(b) / (n + PRIOR_BYTES) > MAX_ANCHOR_SHARE;
  }
}
