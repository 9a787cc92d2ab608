/**
 * The log viewer (ui://logs/viewer.html): a level histogram over time, the lines with their
 * levels and continuation lines, filters that ask the server again, and a live mode. Everything
 * from the log is written as text (the kit's `h`), never as markup.
 */
import { HostConnection, applyTheme, arrowNavigation, h, replace, reportSize, windowPort } from '@suite/shared/app-kit';
import { LogViewerController } from './controller.js';
import { LEVELS, STACK_ORDER, type Histogram, type ViewLine } from './model.js';

const POLL_MS = 1000;

const host = new HostConnection(windowPort());
// When the tool's result arrived: the first render of its lines is timed from here (the controller's handler runs next).
let resultAt: number | undefined;
host.on('ui/notifications/tool-result', () => (resultAt ??= performance.now()));
const viewer = new LogViewerController(host);

const title = h('strong', { class: 'title' }, 'Log viewer');
const level = h('select', { attrs: { 'aria-label': 'Lowest level' } }, h('option', { attrs: { value: '' } }, 'any level'), ...LEVELS.map((l) => h('option', { attrs: { value: l } }, `${l}+`)));
const grep = h('input', { attrs: { type: 'search', placeholder: 'text', 'aria-label': 'Text to find' } });
const since = h('input', { attrs: { type: 'text', placeholder: 'since (1h, ISO time)', 'aria-label': 'Since', size: 16 } });
const apply = h('button', { attrs: { type: 'button' } }, 'Filter');
const follow = h('button', { attrs: { type: 'button', 'aria-pressed': 'false' } }, 'Follow');
// Not a <form>: hosts sandbox apps without allow-forms, where a form never submits.
const filters = h('div', { class: 'k-bar', attrs: { role: 'search' } }, title, level, grep, since, apply, follow);
const status = h('div', { class: 'k-note', attrs: { role: 'status', 'aria-live': 'polite' } });
const histogram = h('div', { class: 'hist', attrs: { role: 'list', 'aria-label': 'Entries per level over time' } });
const lines = h('div', { class: 'lines k-mono', attrs: { role: 'list', 'aria-label': 'Log lines', tabindex: 0 } });
// Structured logs (JSON lines, logfmt, container logs): their fields as columns, named in this header.
const header = h('div', { class: 'colhead k-mono', attrs: { 'aria-hidden': 'true' } });
replace(document.getElementById('app')!, filters, histogram, status, header, lines);
arrowNavigation(histogram, '.bucket');

const applyFilters = (): void =>
  void viewer.applyFilters({ ...(level.value ? { level: level.value as never } : {}), ...(grep.value ? { grep: grep.value } : {}), ...(since.value ? { since: since.value } : {}) });
apply.addEventListener('click', applyFilters);
for (const input of [grep, since]) input.addEventListener('keydown', (event) => event.key === 'Enter' && applyFilters());

let timer: ReturnType<typeof setInterval> | undefined;
follow.addEventListener('click', () => {
  if (viewer.state.following) {
    viewer.stopFollowing();
    clearInterval(timer);
    return;
  }
  void viewer.startFollowing().then(() => {
    if (viewer.state.following) timer = setInterval(() => void viewer.poll(), POLL_MS);
  });
});

let shownLines: ViewLine[] | undefined;
let shownColumns: string[] | undefined;
let shownHistogram: Histogram | undefined;
viewer.onChange(() => {
  const started = performance.now();
  const s = viewer.state;
  title.textContent = s.path ?? 'Log viewer';
  follow.setAttribute('aria-pressed', String(s.following));
  const notes = [...(s.error ? [s.error] : []), ...s.notes, `${s.lines.length} line${s.lines.length === 1 ? '' : 's'}`, ...(s.format !== 'plain' ? [s.format] : [])];
  status.textContent = notes.join(' · ');
  status.className = s.error ? 'k-error' : 'k-note';
  if (s.histogram !== shownHistogram) renderHistogram((shownHistogram = s.histogram));
  if (s.columns !== shownColumns) {
    shownColumns = s.columns;
    header.hidden = s.columns.length === 0;
    replace(header, ...s.columns.map((c) => h('span', { class: 'col' }, c)));
    // Every line gets the new columns: built again, not appended to.
    shownLines = undefined;
  }
  if (s.lines !== shownLines) {
    const atBottom = lines.scrollTop + lines.clientHeight >= lines.scrollHeight - 4;
    renderLines(s.lines, shownLines);
    shownLines = s.lines;
    if (s.following && atBottom) lines.scrollTop = lines.scrollHeight;
    if (resultAt !== undefined && !document.body.dataset.firstRenderMs && s.lines.length > 0) {
      void lines.offsetHeight; // layout included
      document.body.dataset.firstRenderMs = (performance.now() - resultAt).toFixed(1);
    }
  }
  document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
  document.body.dataset.lines = String(s.lines.length);
});

function renderHistogram(hist: Histogram | undefined): void {
  if (!hist || hist.buckets.length === 0) {
    replace(histogram);
    histogram.hidden = true;
    return;
  }
  histogram.hidden = false;
  replace(
    histogram,
    ...hist.buckets.map((b, i) => {
      const present = STACK_ORDER.filter((l) => (b.counts[l] ?? 0) > 0);
      const label = `${b.start}: ${present.map((l) => `${l} ${b.counts[l]}`).join(', ') || 'no entries'}`;
      const bar = h('div', { class: 'bucket', attrs: { role: 'listitem', tabindex: i === 0 ? 0 : -1, 'aria-label': label, title: label, 'data-start': b.start, 'data-counts': JSON.stringify(b.counts) } });
      for (const l of present) {
        const seg = h('div', { class: `seg lvl-${l}` });
        seg.style.height = `${((b.counts[l] ?? 0) / hist.max) * 100}%`;
        bar.appendChild(seg);
      }
      return bar;
    }),
  );
}

/** A line's element, cloned from a built one and filled in (as text): a 5,000-line tail is built in a few milliseconds. */
const LINE = h('div', { class: 'line', attrs: { role: 'listitem' } });
const SOURCE = h('span', { class: 'src' });
const COLUMN = h('span', { class: 'col' });

function lineElement(line: ViewLine): HTMLElement {
  const el = LINE.cloneNode() as HTMLElement;
  if (line.level) el.classList.add(`lvl-${line.level}`);
  if (line.continuation) el.classList.add('cont');
  if (line.source) {
    const source = SOURCE.cloneNode() as HTMLElement;
    source.textContent = line.source;
    el.appendChild(source);
  }
  const columns = viewer.state.columns;
  for (let i = 0; i < columns.length; i++) {
    const cell = COLUMN.cloneNode() as HTMLElement;
    cell.textContent = line.fields?.[columns[i]!] ?? '';
    el.appendChild(cell);
  }
  el.appendChild(document.createTextNode(line.text));
  return el;
}

/** Lines at the end laid out at once: more than a tall view holds, so following and reading the tail meet measured lines. */
const NEAR_END = 300;

function renderLines(next: ViewLine[], previous: ViewLine[] | undefined): void {
  // Live mode appends: keep what is shown and add the new lines (dropping the oldest past the cap).
  const appended = previous !== undefined && next.length > 0 && previous.length > 0 && next.indexOf(previous.at(-1)!) >= 0;
  if (appended) {
    const from = next.indexOf(previous.at(-1)!) + 1;
    const fragment = document.createDocumentFragment();
    for (const line of next.slice(from)) fragment.appendChild(lineElement(line));
    lines.appendChild(fragment);
    while (lines.childElementCount > next.length) lines.firstElementChild!.remove();
    return;
  }
  const fragment = document.createDocumentFragment();
  // Lines far above the end (where a tail is read from) are laid out only when scrolled to (viewer.css: .far).
  const near = next.length - NEAR_END;
  next.forEach((line, i) => {
    const el = lineElement(line);
    if (i < near) el.classList.add('far');
    fragment.appendChild(el);
  });
  lines.replaceChildren(fragment);
  // A tail reads from its end, as tail -n does: the newest lines in view.
  lines.scrollTop = lines.scrollHeight;
}

void host.initialize({ name: 'suite-logs-viewer', version: '1' }).then((context) => {
  applyTheme(context);
  host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
  reportSize((size) => host.notify('ui/notifications/size-changed', size));
});
