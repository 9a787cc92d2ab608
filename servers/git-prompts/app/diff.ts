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
replace(document.getElementById('app')!, h('div', { class: 'k-bar' }, title, unified, sideways), h('div', { class: 'body' }, list, h('div', { class: 'main' }, notes, view)));
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
    return;
  }
  replace(
    list,
    ...diff.files.map((file, i) => {
      const button = h('button', { class: `file st-${file.status}`, attrs: { type: 'button', tabindex: i === 0 ? 0 : -1, 'data-path': file.path } },
        h('span', { class: 'st' }, STATUS_LETTER[file.status]),
        h('span', { class: 'path' }, file.from ? `${file.from} → ${file.path}` : file.path),
        ...counts(file),
      );
      button.addEventListener('click', () => document.getElementById(`file-${i}`)?.scrollIntoView());
      return button;
    }),
  );
  replace(view, ...diff.files.map((file, i) => fileSection(file, i)));
}

/** A file's counts: git's, or of the part shown (marked) when the budget cut its diff; none for a binary file. */
function counts(file: FileDiff): HTMLElement[] {
  if (file.status === 'binary' || file.status === 'unmerged') return [h('span', { class: 'kind' }, file.status)];
  const cut = file.notes.some((n) => n.includes('left out'));
  const mark = cut ? '+' : '';
  return [
    h('span', { class: 'add', attrs: { title: cut ? 'in the part shown' : 'lines added' } }, `+${file.added}${mark}`),
    h('span', { class: 'del', attrs: { title: cut ? 'in the part shown' : 'lines deleted' } }, `−${file.deleted}${mark}`),
  ];
}

function num(n: number | undefined): HTMLElement {
  return h('span', { class: 'no' }, n === undefined ? '' : String(n));
}

function fileSection(file: FileDiff, index: number): HTMLElement {
  const section = h('section', { class: 'file-diff', attrs: { id: `file-${index}`, 'aria-label': file.path } },
    h('h2', { class: `head st-${file.status}` }, file.from ? `${file.from} → ${file.path}` : file.path, h('span', { class: 'st-word' }, ` ${file.status}`)),
  );
  for (const hunk of file.hunks) {
    section.appendChild(h('div', { class: 'hunk-head' }, hunk.header));
    if (!split) {
      const fragment = document.createDocumentFragment();
      for (const line of hunk.lines) fragment.appendChild(h('div', { class: `line k${line.kind === '\\' ? 'n' : line.kind === '+' ? 'a' : line.kind === '-' ? 'd' : 'c'}` }, num(line.oldNo), num(line.newNo), h('span', { class: 'sign' }, line.kind), h('span', { class: 'text' }, line.text)));
      section.appendChild(fragment);
    } else {
      const table = h('div', { class: 'split' });
      for (const row of sideBySide(hunk)) {
        const side = (line: typeof row.left, which: 'old' | 'new'): HTMLElement =>
          line ? h('div', { class: `half k${line.kind === '+' ? 'a' : line.kind === '-' ? 'd' : 'c'}` }, num(which === 'old' ? line.oldNo : line.newNo), h('span', { class: 'text' }, line.text)) : h('div', { class: 'half empty' });
        table.append(side(row.left, 'old'), side(row.right, 'new'));
      }
      section.appendChild(table);
    }
  }
  for (const note of file.notes) section.appendChild(h('div', { class: 'k-note' }, note));
  return section;
}

void host.initialize({ name: 'suite-git-diff', version: '1' }).then((context) => {
  applyTheme(context);
  host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
  reportSize((size) => host.notify('ui/notifications/size-changed', size));
});
