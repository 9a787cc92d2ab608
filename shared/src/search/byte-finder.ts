/**
 * Finding text in raw bytes at memory speed, before anything is decoded. `Buffer.indexOf(needle)`
 * looks for the needle's first byte with memchr and compares from each hit; with a common first
 * byte (the "Z" that ends every ISO timestamp of a log, the "p" of "pthread_" in C headers) that is
 * a stop every few bytes, and it starts over on every call (one per file of a tree). So the needle
 * is anchored on its rarest byte (by the byte frequencies of the first buffer looked at, over a
 * prior of English text), the part of the needle from that byte on is what indexOf looks for
 * (memchr on the rare byte, the comparisons in C++), and the few bytes before it are checked at
 * each hit. Case-insensitive search of ASCII text looks for both cases of the anchor byte. A leaf
 * module: worker threads use it.
 */

const SAMPLE_BYTES = 256 * 1024;

/**
 * What a byte's frequency is assumed to be before the sample says (a small first file says
 * little): occurrences per 100,000 bytes of ASCII, measured here over equal parts of C headers
 * (/usr/include), JavaScript and TypeScript (node_modules) and English prose (licences and
 * documentation); any byte above 0x7F counts 1. Worth PRIOR_BYTES of sample: a 512 KiB chunk of
 * a log outweighs it eight to one ("Z" in every timestamp), a 4 KiB header file does not.
 */
const PRIOR_BYTES = 64 * 1024;
const PER_100K = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 440, 2332, 0, 3, 1, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  19056, 27, 432, 129, 41, 6, 79, 133, 595, 607, 835, 37, 837, 610, 841, 818,
  248, 209, 170, 79, 73, 56, 77, 26, 63, 49, 490, 515, 126, 275, 147, 74,
  83, 507, 181, 465, 313, 612, 272, 250, 147, 579, 20, 64, 545, 290, 419, 428,
  403, 18, 494, 633, 663, 199, 148, 98, 113, 136, 52, 108, 41, 107, 4, 1343,
  147, 3922, 874, 2326, 2155, 7430, 1444, 1036, 1825, 4559, 86, 369, 2198, 1464, 4291, 4576,
  1690, 100, 4343, 3974, 5712, 1865, 651, 553, 342, 1009, 130, 247, 76, 247, 3, 0,
];
const PRIOR = Float64Array.from({ length: 256 }, (_, b) => ((PER_100K[b] ?? 1) * PRIOR_BYTES) / 100_000);
/**
 * A tail of one byte (the anchor is the needle's last) costs a call back from C++ at every
 * occurrence of that byte, not only at the rare occurrences of a longer tail: it is taken only
 * when its byte is this many times rarer than any other.
 */
const LAST_BYTE_PENALTY = 10;

function isAsciiLetter(b: number): boolean {
  return (b >= 65 && b <= 90) || (b >= 97 && b <= 122);
}

export class ByteFinder {
  private readonly needle: Buffer;
  private anchor = -1;
  private anchorBytes: number[] = [];
  /** Case-sensitive: the needle from its anchor byte on, what indexOf looks for. */
  private tail: Buffer = Buffer.alloc(0);

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
    const k = this.anchor;
    if (!this.caseInsensitive) {
      for (let i = bytes.indexOf(this.tail, from + k); i !== -1; i = bytes.indexOf(this.tail, i + 1)) if (this.headMatchesAt(bytes, i - k)) return i - k;
      return -1;
    }
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

  /** Whether the needle's bytes before its anchor are at `start` (the tail was found right after them). */
  private headMatchesAt(buf: Buffer, start: number): boolean {
    for (let j = 0; j < this.anchor; j++) if (buf[start + j] !== this.needle[j]) return false;
    return true;
  }

  /** Case-insensitive: whether the needle is at `start`. */
  private matchesAt(buf: Buffer, start: number): boolean {
    const needle = this.needle;
    for (let j = 0; j < needle.length; j++) {
      const b = buf[start + j] as number;
      if ((isAsciiLetter(b) ? b | 0x20 : b) !== (needle[j] as number)) return false;
    }
    return true;
  }

  private chooseAnchor(sample: Uint8Array): void {
    const counts = Float64Array.from(PRIOR);
    const n = Math.min(sample.length, SAMPLE_BYTES);
    for (let i = 0; i < n; i++) {
      const b = sample[i] as number;
      counts[b] = (counts[b] as number) + 1;
    }
    const needle = this.needle;
    const frequency = (b: number): number => (this.caseInsensitive && isAsciiLetter(b) ? (counts[b | 0x20] as number) + (counts[b & ~0x20] as number) : (counts[b] as number));
    const cost = (j: number): number => frequency(needle[j] as number) * (!this.caseInsensitive && j > 0 && j === needle.length - 1 ? LAST_BYTE_PENALTY : 1);
    // The rarest byte, the first of equals: the longest tail.
    let best = 0;
    for (let j = 1; j < needle.length; j++) if (cost(j) < cost(best)) best = j;
    const b = this.needle[best] as number;
    this.anchor = best;
    this.anchorBytes = this.caseInsensitive && isAsciiLetter(b) ? [b | 0x20, b & ~0x20] : [b];
    this.tail = this.needle.subarray(best);
  }
}
