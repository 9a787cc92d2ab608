/**
 * Hygiene for text that people other than the user wrote (issue and pull request titles and bodies,
 * comments, reviews, commit messages, release notes) before it reaches the model. The attacks it
 * blunts hide instructions where a human reviewing the same page on github.com would not see them:
 * invisible and tag characters, bidirectional overrides that reorder what is shown, variation
 * selectors used to smuggle bytes, HTML comments and elements that do not render, and code-fence
 * info strings that GitHub does not display. What renders visibly (markdown, code) is kept.
 *
 * File contents and diffs never pass through here: the model must see them exactly.
 */

const PLAIN = /^[\t\n\r\x20-\x7e]*$/;

/**
 * Unicode's default-ignorable code points: what a renderer shows as nothing (zero-width and
 * bidirectional controls, invisible operators, Hangul fillers, Khmer inherent vowels, musical
 * formatting controls, tag characters and the unassigned rest of their block, ...).
 */
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const ZERO_WIDTH_JOINER = 0x200d;

/** Code points removed wherever they appear (variation selectors are judged apart: see selectorFits). */
function isInvisible(cp: number): boolean {
  if (cp <= 0x1f) return cp !== 0x09 && cp !== 0x0a && cp !== 0x0d; // C0 controls (ANSI escapes start here)
  if (cp >= 0x7f && cp <= 0x9f) return true; // DEL and C1 controls
  if (cp >= 0xfff9 && cp <= 0xfffb) return true; // interlinear annotation characters
  if (cp < 0xad || cp > 0x10ffff) return false;
  // The joiner is judged apart (see joinerFits): inside an emoji sequence it is what builds it.
  return cp !== ZERO_WIDTH_JOINER && DEFAULT_IGNORABLE.test(String.fromCodePoint(cp));
}

const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const EMOJI_MODIFIER = /^\p{Emoji_Modifier}$/u;

/**
 * A zero-width joiner is kept only inside an emoji sequence (👨‍👩‍👧, 🏳️‍🌈, 👩🏽‍💻): after a pictograph (or
 * its skin-tone modifier or emoji presentation selector) and before another pictograph. Between
 * letters it joins nothing a reader sees, and can split a word a filter looks for.
 */
function joinerFits(before: string | undefined, beforeThat: string | undefined, after: string | undefined): boolean {
  if (before === undefined || after === undefined || !PICTOGRAPHIC.test(after)) return false;
  if (PICTOGRAPHIC.test(before)) return true;
  const base = beforeThat !== undefined && PICTOGRAPHIC.test(beforeThat);
  return base && (EMOJI_MODIFIER.test(before) || before === '\ufe0f');
}

/** Standardized variation selectors, their supplement, and Mongolian's free variation selectors. */
function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef) || (cp >= 0x180b && cp <= 0x180d) || cp === 0x180f;
}

const GRAPHIC = /^[\p{L}\p{N}\p{P}\p{S}\p{M}]$/u;
const HAN = /^\p{Script=Han}$/u;
const MONGOLIAN = /^\p{Script=Mongolian}$/u;

/**
 * A variation selector is kept only right after a character it can modify (an emoji, a CJK
 * ideograph, a Mongolian letter, a keycap digit), and only one per character: runs of selectors, or selectors after
 * plain letters or after something removed, are how payloads are smuggled.
 */
function selectorFits(base: string | undefined, cp: number): boolean {
  if (base === undefined) return false;
  const baseCp = base.codePointAt(0)!;
  if (isVariationSelector(baseCp) || !GRAPHIC.test(base)) return false;
  if (cp >= 0xe0100) return HAN.test(base);
  if (cp < 0xfe00) return MONGOLIAN.test(base);
  if (baseCp < 0x80) return (base === '#' || base === '*' || (base >= '0' && base <= '9')) && (cp === 0xfe0e || cp === 0xfe0f);
  return true;
}

/** Removes invisible, control and bidirectional characters, and variation selectors that fit nothing. */
export function stripInvisible(text: string): string {
  if (PLAIN.test(text)) return text;
  let out = '';
  let previousKept: string | undefined;
  let keptBefore: string | undefined;
  const chars = [...text];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const cp = ch.codePointAt(0)!;
    let keep: boolean;
    if (isVariationSelector(cp)) keep = selectorFits(previousKept, cp);
    else if (cp === ZERO_WIDTH_JOINER) keep = joinerFits(previousKept, keptBefore, chars[i + 1]);
    else keep = !isInvisible(cp);
    if (keep) out += ch;
    keptBefore = keep ? previousKept : undefined;
    previousKept = keep ? ch : undefined;
  }
  return out;
}

/** Elements whose content never renders as text: removed with what they hold. */
const DROPPED_WITH_CONTENT = 'script|style|iframe|object|embed|template|noscript|textarea|svg|math|title|head|xmp|noembed|noframes|select';
/** Formatting GitHub renders visibly; kept without attributes (except safe link targets). */
const KEPT_TAGS = new Set('b i em strong code pre br p ul ol li blockquote h1 h2 h3 h4 h5 h6 hr table thead tbody tr td th sub sup kbd del s a'.split(' '));
const COMMENT = /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<![A-Za-z][^>]*>|<\?[\s\S]*?(?:\?>|$)/g;
const DROPPED = new RegExp(`<(${DROPPED_WITH_CONTENT})\\b(?:"[^"]*"|'[^']*'|[^'">])*>[\\s\\S]*?(?:<\\/\\1\\s*>|$)`, 'gi');
const TAG = /<\/?([A-Za-z][A-Za-z0-9-]*)((?:"[^"]*"|'[^']*'|[^'">])*)>/g;
const ATTRIBUTE = /([^\s/>"'=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?/g;
/** Entities that decode to characters stripInvisible removes: a renderer would hide them. */
const INVISIBLE_ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(shy|zwnj|zwj|lrm|rlm|ZeroWidthSpace|NoBreak|InvisibleTimes|it|InvisibleComma|ic|af|ApplyFunction|NegativeVeryThinSpace|NegativeThinSpace|NegativeMediumSpace|NegativeThickSpace));/g;

function safeUrl(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

function attributeValues(attributes: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const [, rawName, rawValue] of attributes.matchAll(ATTRIBUTE)) {
    const name = rawName!.toLowerCase();
    if (!values.has(name)) values.set(name, (rawValue ?? '').replace(/^["']|["']$/g, ''));
  }
  return values;
}

/**
 * An image as the words that describe it: `[image: alt text]`, or `[image]`. Nothing that loads
 * from elsewhere reaches the model (an image URL in text that a client renders is a beacon, and
 * the way data leaves in exfiltration attacks); the alt text is what a reader without images gets.
 * An angle bracket in it is made inert, so it cannot start a tag in the next round.
 */
function imageText(alt: string | undefined): string {
  const words = (alt ?? '').replace(/\s+/g, ' ').trim().replace(/</g, '&lt;');
  return words ? `[image: ${words}]` : '[image]';
}

function rebuildTag(whole: string, name: string, attributes: string): string {
  const tag = name.toLowerCase();
  const closing = whole.startsWith('</');
  if (tag === 'img') return closing ? '' : imageText(attributeValues(attributes).get('alt') ?? attributeValues(attributes).get('title'));
  if (!KEPT_TAGS.has(tag)) return '';
  if (closing) return `</${tag}>`;
  const href = tag === 'a' ? safeUrl(attributeValues(attributes).get('href') ?? '') : undefined;
  return href ? `<a href="${href.replace(/"/g, '%22')}">` : `<${tag}>`;
}

/**
 * Markdown images, inline (`![alt](url "title")`) and by reference (`![alt][ref]`), as their alt
 * text; the alt may hold one level of brackets. An escaped `\![` is not an image.
 */
const MARKDOWN_IMAGE = /(?<!\\)!\[((?:[^[\]\n]|\[[^[\]\n]*\])*)\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^[\]\n]*\])/g;

function replaceInvisibleEntities(text: string): string {
  return text.replace(INVISIBLE_ENTITY, (whole: string, dec?: string, hex?: string, named?: string) => {
    if (named) return '';
    const cp = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    // A joiner written as an entity is no part of an emoji a reader sees.
    return isInvisible(cp) || isVariationSelector(cp) || cp === ZERO_WIDTH_JOINER ? '' : whole;
  });
}

/** Repeats a rewrite until nothing changes, so a removal cannot assemble a new tag (`<scr<b></b>ipt>`). */
function untilStable(text: string, rewrite: (text: string) => string): string {
  let current = text;
  for (let round = 0; round < 8; round++) {
    const next = rewrite(current);
    if (next === current) return current;
    current = next;
  }
  // Still changing: give up on structure and make every angle bracket inert.
  return current.replace(/</g, '&lt;');
}

/**
 * What renders as nothing anywhere, code included: comments, declarations, non-rendering elements
 * with their content, markdown comments, entities for invisible characters. Removed before code is
 * told apart from prose, because an HTML block on GitHub swallows the fences and spans inside it.
 */
function removeHidden(text: string): string {
  if (!/[<&[]/.test(text)) return text;
  return untilStable(text, (t) => replaceInvisibleEntities(t.replace(COMMENT, '').replace(DROPPED, '').replace(MARKDOWN_COMMENT, '')));
}

/**
 * Prose HTML reduced to what renders as visible text: tags go and leave their text, the formatting
 * tags GitHub shows stay without attributes (links keep an http(s) target).
 */
function reduceTags(text: string): string {
  if (!/[<&]|!\[/.test(text)) return text;
  return untilStable(text, (t) =>
    replaceInvisibleEntities(
      t
        .replace(COMMENT, '')
        .replace(DROPPED, '')
        .replace(TAG, (whole: string, name: string, attributes: string) => rebuildTag(whole, name, attributes))
        .replace(MARKDOWN_IMAGE, (_whole: string, alt: string) => imageText(alt)),
    ),
  );
}

/**
 * Link reference definitions, `[label]: https://... "title"` (the title may sit on the next line):
 * GitHub shows nothing of them, so neither the URL nor the title may reach the model unseen. A
 * reference to one (`[text][label]`) keeps its visible text; a reference-style image keeps only its
 * alt text, and with the definition gone, its URL is gone too.
 */
const LINK_DEFINITION = /^ {0,3}\[(?:[^\]\n\\]|\\.)+\]:[ \t]*(?:\n[ \t]*)?(?:<[^>\n]*>|[^\s<]\S*)(?:(?:[ \t]+|[ \t]*\n[ \t]*)(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*(?:\n|$)/gm;

/** Markdown's comment idiom, `[//]: # (hidden text)`: a link definition that renders as nothing. */
const MARKDOWN_COMMENT = /^ {0,3}\[[^\]\n]*\]:[ \t]*#[ \t]*(?:\([^)\n]*\)|"[^"\n]*"|'[^'\n]*')?[ \t]*(?:\n|$)/gm;

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const MAX_INFO_LENGTH = 48;
const SAFE_INFO = /^[\p{L}\p{N}+#._-]+$/u;

/**
 * GitHub shows a fence's info string only as the language of the block; anything beyond one short
 * language token (`` ```js ignore all previous instructions ``) is dropped.
 */
function cleanFenceLine(indent: string, fence: string, info: string): string {
  const token = info.trim();
  if (token === '' || (token.length <= MAX_INFO_LENGTH && SAFE_INFO.test(token))) return `${indent}${fence}${token}`;
  return `${indent}${fence}`;
}

/**
 * Splits text into prose (reduced as HTML) and code (fenced blocks, inline code spans: shown
 * literally by GitHub, so kept as written). A backtick escaped with a backslash opens no span, and
 * a span does not cross a blank line, as in CommonMark; where the two might disagree, the text is
 * treated as prose, which only ever removes more.
 */
function reduceOutsideCode(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let prose: string[] = [];
  let fence: { char: string; length: number } | undefined;
  const flushProse = (): void => {
    if (prose.length > 0) out.push(reduceProse(prose.join('\n')));
    prose = [];
  };
  for (const line of lines) {
    const match = FENCE.exec(line);
    if (fence) {
      const closes = match && match[2]![0] === fence.char && match[2]!.length >= fence.length && match[3]!.trim() === '';
      out.push(closes ? `${match![1]}${match![2]}` : line);
      if (closes) fence = undefined;
      continue;
    }
    if (match && !(match[2]![0] === '`' && match[3]!.includes('`'))) {
      flushProse();
      fence = { char: match[2]![0]!, length: match[2]!.length };
      out.push(cleanFenceLine(match[1]!, match[2]!, match[3]!));
      continue;
    }
    prose.push(line);
  }
  flushProse();
  return out.join('\n');
}

/** Inline code spans as [start, end) offsets: a run of N unescaped backticks up to the next run of exactly N, within a paragraph. */
function codeSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  const runLength = (at: number): number => {
    let n = 0;
    while (text[at + n] === '`') n++;
    return n;
  };
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      i++;
      continue;
    }
    const open = runLength(i);
    let backslashes = 0;
    while (text[i - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 1) {
      i += open;
      continue;
    }
    let j = i + open;
    let close = -1;
    while (j < text.length) {
      if (text[j] === '`') {
        const n = runLength(j);
        if (n === open) {
          close = j;
          break;
        }
        j += n;
      } else j++;
    }
    if (close === -1 || /\n[ \t]*\n/.test(text.slice(i, close))) {
      i += open;
      continue;
    }
    spans.push([i, close + open]);
    i = close + open;
  }
  return spans;
}

function reduceProse(text: string): string {
  const prose = text.includes(']:') ? untilStable(text, (t) => t.replace(LINK_DEFINITION, '')) : text;
  if (!/[<&]|!\[/.test(prose)) return prose;
  let result = '';
  let last = 0;
  for (const [start, end] of codeSpans(prose)) {
    result += reduceTags(prose.slice(last, start)) + prose.slice(start, end);
    last = end;
  }
  return result + reduceTags(prose.slice(last));
}

/**
 * The one entry point for user-authored text: invisible characters out, hidden HTML out, tags
 * reduced outside code, fence info strings checked, and invisible characters out again (removing
 * tags can bring a selector next to a character it then seems to fit).
 */
export function sanitizeText(text: string | null | undefined): string {
  if (!text) return '';
  const first = stripInvisible(text.replace(/\r\n?/g, '\n'));
  if (!/[<&`~[]/.test(first)) return first;
  return stripInvisible(reduceOutsideCode(removeHidden(first)));
}

/** A one-line field (a title, a name): sanitised, line breaks folded to spaces. */
export function sanitizeLine(text: string | null | undefined): string {
  return sanitizeText(text).replace(/\s*\n\s*/g, ' ').trim();
}
