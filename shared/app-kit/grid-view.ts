/**
 * A result grid page (the SQLite and PostgreSQL servers' apps): a query tool's rows with sortable,
 * resizable columns; NULL, BLOBs, JSON and long text shown as what they are; more rows through the
 * server's app-only page tool. Every value is written as text (never markup): a cell may hold
 * anything someone stored.
 */
import './grid.css';
import { applyTheme, h, replace, reportSize, windowPort } from './dom.js';
import { HostConnection } from './rpc.js';
import { GridController, cellView, type Cell, type Column, type GridOptions } from './grid-model.js';

export function mountGrid(app: { name: string }, options: GridOptions): void {
  const host = new HostConnection(windowPort());
  let resultAt: number | undefined;
  host.on('ui/notifications/tool-result', () => (resultAt ??= performance.now()));
  const grid = new GridController(host, options);

  const status = h('span', { class: 'k-note', attrs: { role: 'status', 'aria-live': 'polite' } });
  const more = h('button', { attrs: { type: 'button' } }, 'Load more rows');
  more.addEventListener('click', () => void grid.loadMore());
  const head = h('thead');
  const body = h('tbody');
  const table = h('table', { class: 'grid k-mono', attrs: { 'aria-label': 'Query result' } }, head, body);
  replace(document.getElementById('app')!, h('div', { class: 'k-bar' }, status, more), h('div', { class: 'scroll' }, table));

  // Long text and JSON open and close in place (Enter or a click).
  body.addEventListener('click', (event) => toggle((event.target as HTMLElement).closest('td')));
  body.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') toggle((event.target as HTMLElement).closest('td'));
  });
  function toggle(td: HTMLTableCellElement | null): void {
    if (!td?.dataset.full) return;
    const open = td.classList.toggle('open');
    td.textContent = open ? td.dataset.full : td.dataset.short!;
    td.setAttribute('aria-expanded', String(open));
  }

  let shownColumns: Column[] | undefined;
  let shownRows: Cell[][] | undefined;
  grid.onChange(() => {
    const s = grid.state;
    status.textContent = [s.error, `${s.rows.length} row${s.rows.length === 1 ? '' : 's'}${s.more ? ', more available' : ''}`, s.loading ? 'loading…' : ''].filter(Boolean).join(' · ');
    status.className = s.error ? 'k-error' : 'k-note';
    more.hidden = !s.more;
    more.disabled = s.loading;
    if (s.columns !== shownColumns) renderHead((shownColumns = s.columns));
    for (const [i, th] of [...head.querySelectorAll('th')].entries()) {
      th.setAttribute('aria-sort', s.sort?.column === i ? (s.sort.descending ? 'descending' : 'ascending') : 'none');
    }
    if (s.rows !== shownRows) {
      renderRows(s.rows, s.columns);
      shownRows = s.rows;
      if (resultAt !== undefined && !document.body.dataset.firstRenderMs && s.rows.length > 0) {
        void table.offsetHeight; // layout included
        document.body.dataset.firstRenderMs = (performance.now() - resultAt).toFixed(1);
      }
    }
  });

  function renderHead(columns: Column[]): void {
    const row = h('tr');
    columns.forEach(({ name, type }, i) => {
      const button = h('button', { class: 'sort', attrs: { type: 'button', title: `Sort by ${name}${type ? ` (${type})` : ''}` } }, name);
      button.addEventListener('click', () => grid.sortBy(i));
      const handle = h('span', { class: 'resize', attrs: { role: 'separator', 'aria-orientation': 'vertical', 'aria-label': `Resize ${name}`, tabindex: 0 } });
      const th = h('th', { attrs: { scope: 'col' } }, button, handle);
      resizable(th, handle);
      row.appendChild(th);
    });
    replace(head, row);
  }

  /** Drag the handle, or focus it and press the arrow keys, to change a column's width. */
  function resizable(th: HTMLTableCellElement, handle: HTMLElement): void {
    const setWidth = (px: number): void => {
      th.style.width = `${Math.max(40, Math.round(px))}px`;
    };
    handle.addEventListener('pointerdown', (event) => {
      event.preventDefault();
      const startX = event.clientX;
      const startWidth = th.getBoundingClientRect().width;
      handle.setPointerCapture(event.pointerId);
      const move = (e: PointerEvent): void => setWidth(startWidth + e.clientX - startX);
      const up = (): void => {
        handle.removeEventListener('pointermove', move);
        handle.removeEventListener('pointerup', up);
      };
      handle.addEventListener('pointermove', move);
      handle.addEventListener('pointerup', up);
    });
    handle.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 20 : event.key === 'ArrowLeft' ? -20 : 0;
      if (step === 0) return;
      event.preventDefault();
      setWidth(th.getBoundingClientRect().width + step);
    });
  }

  /** Rows shown at once; the rest follow in chunks, a frame apart, so a large result shows at once and stays responsive. */
  const FIRST_ROWS = 200;
  const CHUNK_ROWS = 1000;
  let renderToken = 0;

  function rowElement(row: Cell[], columns: Column[]): HTMLTableRowElement {
    const tr = document.createElement('tr');
    for (let i = 0; i < columns.length; i++) {
      const view = cellView(row[i] ?? null, columns[i]!.type);
      const td = document.createElement('td');
      td.className = view.kind;
      td.textContent = view.text;
      if (view.full !== undefined) {
        td.dataset.full = view.full;
        td.dataset.short = view.text;
        td.tabIndex = 0;
        td.setAttribute('aria-expanded', 'false');
      }
      tr.appendChild(td);
    }
    return tr;
  }

  function appendRows(rows: Cell[][], from: number, to: number, columns: Column[]): void {
    const fragment = document.createDocumentFragment();
    for (let r = from; r < to; r++) fragment.appendChild(rowElement(rows[r]!, columns));
    body.appendChild(fragment);
  }

  function renderRows(rows: Cell[][], columns: Column[]): void {
    const token = ++renderToken;
    body.replaceChildren();
    document.body.dataset.rendered = 'false';
    appendRows(rows, 0, Math.min(FIRST_ROWS, rows.length), columns);
    const next = (from: number): void => {
      if (token !== renderToken) return; // a newer result or sort replaced these rows
      if (from >= rows.length) {
        document.body.dataset.rendered = 'true';
        if (resultAt !== undefined && !document.body.dataset.allRenderedMs) document.body.dataset.allRenderedMs = (performance.now() - resultAt).toFixed(1);
        return;
      }
      appendRows(rows, from, Math.min(from + CHUNK_ROWS, rows.length), columns);
      setTimeout(() => next(from + CHUNK_ROWS), 0);
    };
    setTimeout(() => next(FIRST_ROWS), 0);
  }

  void host.initialize({ name: app.name, version: '1' }).then((context) => {
    applyTheme(context);
    host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
    reportSize((size) => host.notify('ui/notifications/size-changed', size));
  });
}
