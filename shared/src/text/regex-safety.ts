/**
 * JavaScript regular expressions backtrack, and a pattern with a quantified group that itself
 * contains an unbounded quantifier — `(a+)+`, `(\w*)*`, `(x+y?)+` — can take exponential time on a
 * line that almost matches, freezing the whole server. This rejects that shape (the "star height
 * greater than one" rule that tools such as safe-regex use). It is a heuristic: it refuses some
 * harmless patterns and does not catch every slow one, but it removes the classic catastrophic
 * cases a model is likely to write.
 */
export function nestedQuantifier(source: string): string | undefined {
  interface Frame {
    start: number;
    unbounded: boolean;
  }
  const stack: Frame[] = [{ start: 0, unbounded: false }];
  let lastGroup: Frame | undefined;
  let i = 0;
  const unboundedAt = (at: number): number => {
    const c = source[at];
    if (c === '*' || c === '+') return 1;
    if (c === '{') {
      const m = /^\{(\d+),\}/.exec(source.slice(at));
      if (m) return m[0].length;
    }
    return 0;
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\\') {
      i += 2;
      lastGroup = undefined;
      continue;
    }
    if (c === '[') {
      // Skip a character class, honouring escapes and a leading ].
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      i++;
      lastGroup = undefined;
      continue;
    }
    if (c === '(') {
      stack.push({ start: i, unbounded: false });
      lastGroup = undefined;
      i++;
      continue;
    }
    if (c === ')') {
      const frame = stack.length > 1 ? (stack.pop() as Frame) : undefined;
      lastGroup = frame;
      i++;
      if (frame) {
        const q = unboundedAt(i);
        if (q > 0 && frame.unbounded) return source.slice(frame.start, i + q);
        const parent = stack[stack.length - 1] as Frame;
        if (frame.unbounded || q > 0) parent.unbounded = true;
      }
      continue;
    }
    const q = unboundedAt(i);
    if (q > 0) {
      if (!lastGroup) (stack[stack.length - 1] as Frame).unbounded = true;
      lastGroup = undefined;
      i += q;
      continue;
    }
    lastGroup = undefined;
    i++;
  }
  return undefined;
}
