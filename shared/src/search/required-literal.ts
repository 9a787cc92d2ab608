/**
 * The text every match of a regular expression must contain (ripgrep calls it the required
 * literal): a search looks for it in raw bytes and runs the expression only on the lines that hold
 * it. A leaf module: worker threads use it.
 */

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
