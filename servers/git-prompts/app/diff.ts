/**
 * The diff viewer (ui://git-prompts/diff.html): the diff tools' and git_show's answers as a file list
 * with counts and the diff, unified or side by side. Everything from the repository (paths, lines,
 * commit messages) is written as text, never as markup.
 */
import { HostConnection, applyTheme, arrowNavigation, h, replace, reportSize, resultText, windowPort } from '@suite/shared/app-kit';
import { parseDiff, sideBySide, type FileDiff, type ParsedDiff } from './diff-model.js';

const host = new HostConnection(windowPort());
let resultAt: number | undefined;
let current: ParsedDiff | undefined;
let split = false;

const title = h('strong', { class: 'title' }, 'Diff');
const unified = h('button', { attrs: { type: 'button', 'aria-pressed': 'true' } }, 'Unified');
const sideways = h('button', { attrs: { type: 'button', 'aria-pressed': 'false' } }, 'Side by side');
const list = h('nav', { class: 'files', attrs: { 'aria-label': 'Changed files' } });
const notes = h('div', { class: 'k-note notes', attrs: { role: 'status' } });
const view = h('main', { class: 'diff k-mono' });
const main = h('div', { class: 'main' }, notes, view);
replace(document.getElementById('app')!, h('div', { class: 'k-bar' }, title, unified, sideways), h('div', { class: 'body' }, list, main));
arrowNavigation(list, 'a, button.file');

for (const [button, value] of [[unified, false], [sideways, true]] as const) {
  button.addEventListener('click', () => {
    split = value;
    unified.setAttribute('aria-pressed', String(!split));
    sideways.setAttribute('aria-pressed', String(split));
    if (current) render(current);
  });
}

host.on('ui/notifications/tool-result', (params) => {
  resultAt ??= performance.now();
  const result = params as { content?: { type: string; text?: string }[]; isError?: boolean };
  const text = resultText(result);
  if (result.isError) {
    current = undefined;
    notes.className = 'k-error notes';
    notes.textContent = text;
    replace(view);
    replace(list);
    renders++;
    document.body.dataset.rendered = 'true';
    return;
  }
  current = parseDiff(text);
  render(current);
  if (!document.body.dataset.firstRenderMs) {
    void view.offsetHeight;
    document.body.dataset.firstRenderMs = (performance.now() - resultAt).toFixed(1);
  }
});

const STATUS_LETTER: Record<FileDiff['status'], string> = { added: 'A', deleted: 'D', modified: 'M', renamed: 'R', copied: 'C', binary: 'B', unmerged: 'U' };

function render(diff: ParsedDiff): void {
  title.textContent = diff.title || 'Diff';
  notes.className = 'k-note notes';
  notes.textContent = diff.notes.join('\n');
  if (diff.plain !== undefined) {
    replace(list);
    replace(view, h('pre', { class: 'plain' }, diff.plain));
    renders++;
    document.body.dataset.rendered = 'true';
    return;
  }
  list.replaceChildren();
  near?.disconnect();
  near = new IntersectionObserver((entries) => entries.forEach((entry) => entry.isIntersecting && fill(entry.target)), { root: main, rootMargin: '1200px 0px' });
  view.replaceChildren();
  shown = diff.files;
  built = listed = 0;
  listEntries(FIRST_ENTRIES);
  buildSections(FIRST_SECTIONS);
  fillInBackground(++renders);
}

// One click listener for the whole list (not one per file).
list.addEventListener('click', (event) => {
  const entry = (event.target as HTMLElement).closest<HTMLElement>('button.file');
  if (!entry) return;
  const index = Number(entry.dataset.index);
  buildSections(index + 1);
  const section = view.children[index];
  if (!section) return;
  fill(section);
  section.scrollIntoView();
});

/**
 * A file's entry in the list, cloned from a built one and filled in: a 2,000-file list is built in
 * a few milliseconds this way (building each entry afresh took about 60 µs a file).
 */
const ENTRY = h('button', { class: 'file', attrs: { type: 'button', tabindex: -1 } }, h('span', { class: 'st' }), h('span', { class: 'path' }));
const COUNTS = [h('span', { class: 'add' }), h('span', { class: 'del' })];
const KIND = h('span', { class: 'kind' });

function fileEntry(file: FileDiff, index: number): HTMLButtonElement {
  const button = ENTRY.cloneNode(true) as HTMLButtonElement;
  button.classList.add(`st-${file.status}`);
  if (index === 0) button.tabIndex = 0;
  button.dataset.path = file.path;
  button.dataset.index = String(index);
  button.children[0]!.textContent = STATUS_LETTER[file.status];
  button.children[1]!.textContent = file.from ? `${file.from} → ${file.path}` : file.path;
  if (file.status === 'binary' || file.status === 'unmerged') {
    const kind = KIND.cloneNode() as HTMLElement;
    kind.textContent = file.status;
    button.appendChild(kind);
    return button;
  }
  // Git's counts, or those of the part shown (marked +) when the budget cut the file's diff.
  const cut = file.notes.some((n) => n.includes('left out'));
  const [added, deleted] = COUNTS.map((span) => span.cloneNode() as HTMLElement) as [HTMLElement, HTMLElement];
  added.textContent = `+${file.added}${cut ? '+' : ''}`;
  deleted.textContent = `−${file.deleted}${cut ? '+' : ''}`;
  added.title = cut ? 'in the part shown' : 'lines added';
  deleted.title = cut ? 'in the part shown' : 'lines deleted';
  button.append(added, deleted);
  return button;
}

let renders = 0;
let shown: FileDiff[] = [];
/** Files listed, from the first. */
let listed = 0;
/** Files whose sections (heading and placeholder) exist, from the first. */
let built = 0;
/** Files listed with the first render; the rest follow in the background, a few hundred a task. */
const FIRST_ENTRIES = 300;
const BACKGROUND_ENTRIES = 500;
/** Sections built with the first render; the rest follow in the background (or at once up to a file picked in the list). */
const FIRST_SECTIONS = 60;
/** Sections built and drawn per task in the background. */
const BACKGROUND_SECTIONS = 40;

function listEntries(upTo: number): void {
  const end = Math.min(upTo, shown.length);
  if (listed >= end) return;
  const fragment = document.createDocumentFragment();
  for (; listed < end; listed++) fragment.appendChild(fileEntry(shown[listed]!, listed));
  list.appendChild(fragment);
}

function buildSections(upTo: number): void {
  const end = Math.min(upTo, shown.length);
  if (built >= end) return;
  const fragment = document.createDocumentFragment();
  for (; built < end; built++) {
    const section = fileSection(shown[built]!, built);
    near?.observe(section);
    fragment.appendChild(section);
  }
  view.appendChild(fragment);
}

/** The sections no one scrolled to yet, built and drawn a few at a time between frames: in the end the whole diff is on the page (find in page sees it). */
function fillInBackground(render: number): void {
  document.body.dataset.rendered = 'false';
  let next = 0;
  const step = (): void => {
    if (render !== renders) return; // a newer answer or layout replaced these sections
    listEntries(listed + BACKGROUND_ENTRIES);
    buildSections(next + BACKGROUND_SECTIONS);
    for (const end = Math.min(built, next + BACKGROUND_SECTIONS); next < end; next++) fill(view.children[next]!);
    if (next < shown.length || listed < shown.length) setTimeout(step, 0);
    else {
      document.body.dataset.rendered = 'true';
      if (resultAt !== undefined && !document.body.dataset.allRenderedMs) document.body.dataset.allRenderedMs = (performance.now() - resultAt).toFixed(1);
    }
  };
  setTimeout(step, 0);
}

/**
 * A file's lines are drawn when its section comes near the view, or its name is picked in the
 * list, or the background gets to it: a 2,000-file diff first shows the start of its list of
 * files and its first sections, each a heading and a placeholder as tall as its lines until drawn;
 * the rest of the list follows within a few tasks.
 */
let near: IntersectionObserver | undefined;
const pending = new WeakMap<Element, () => void>();
/** About one line's height, for a placeholder: a file's place in the scroll is then about right before it is drawn. */
const LINE_PX = 18;

function fill(section: Element): void {
  const draw = pending.get(section);
  if (!draw) return;
  pending.delete(section);
  near?.unobserve(section);
  draw();
}

function num(n: number | undefined): HTMLElement {
  return h('span', { class: 'no' }, n === undefined ? '' : String(n));
}

function fileSection(file: FileDiff, index: number): HTMLElement {
  const section = h('section', { class: 'file-diff', attrs: { id: `file-${index}`, 'aria-label': file.path } },
    h('h2', { class: `head st-${file.status}` }, file.from ? `${file.from} → ${file.path}` : file.path, h('span', { class: 'st-word' }, ` ${file.status}`)),
  );
  const placeholder = h('div', { class: 'pending' });
  const height = file.hunks.reduce((n, hunk) => n + 1 + hunk.lines.length, file.notes.length + 1) * LINE_PX;
  placeholder.style.height = `${height - LINE_PX}px`;
  // Its size while out of view and not laid out (diff.css: content-visibility), until drawn and measured.
  section.style.containIntrinsicSize = `auto ${height}px`;
  section.appendChild(placeholder);
  pending.set(section, () => placeholder.replaceWith(fileBody(file)));
  return section;
}

function fileBody(file: FileDiff): DocumentFragment {
  const body = document.createDocumentFragment();
  for (const hunk of file.hunks) {
    body.appendChild(h('div', { class: 'hunk-head' }, hunk.header));
    if (!split) {
      for (const line of hunk.lines) body.appendChild(h('div', { class: `line k${line.kind === '\\' ? 'n' : line.kind === '+' ? 'a' : line.kind === '-' ? 'd' : 'c'}` }, num(line.oldNo), num(line.newNo), h('span', { class: 'sign' }, line.kind), h('span', { class: 'text' }, line.text)));
    } else {
      const table = h('div', { class: 'split' });
      for (const row of sideBySide(hunk)) {
        const side = (line: typeof row.left, which: 'old' | 'new'): HTMLElement =>
          line ? h('div', { class: `half k${line.kind === '+' ? 'a' : line.kind === '-' ? 'd' : 'c'}` }, num(which === 'old' ? line.oldNo : line.newNo), h('span', { class: 'text' }, line.text)) : h('div', { class: 'half empty' });
        table.append(side(row.left, 'old'), side(row.right, 'new'));
      }
      body.appendChild(table);
    }
  }
  for (const note of file.notes) body.appendChild(h('div', { class: 'k-note' }, note));
  return body;
}

void host.initialize({ name: 'suite-git-diff', version: '1' }).then((context) => {
  applyTheme(context);
  host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
  reportSize((size) => host.notify('ui/notifications/size-changed', size));
});
