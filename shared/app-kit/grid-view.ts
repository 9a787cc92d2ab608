/**
 * A result grid page (the SQLite and PostgreSQL servers' apps): a query tool's rows with sortable,
 * resizable columns; NULL, BLOBs, JSON and long text shown as what they are; more rows through the
 * server's app-only page tool. Every value is written as text (never markup): a cell may hold
 * anything someone stored. Rows are drawn virtually: only those in view (and a few either side) are
 * in the DOM, between two spacers that give the scroll area every row's height, so a 10,000-row
 * result is whole and scrollable at once, and sorting redraws one window, not every row.
 */
import './grid.css';
import { applyTheme, h, replace, reportSize, windowPort } from './dom.js';
import { HostConnection } from './rpc.js';
import { GridController, cellView, type Cell, type Column, type GridOptions } from './grid-model.js';
import type { PlanTreeNode } from './plan-model.js';

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
  // Focusable, so that the arrow keys, Page Up/Down, Home and End scroll the rows from the keyboard.
  const scroller = h('div', { class: 'scroll', attrs: { tabindex: 0, 'aria-label': 'Rows' } }, table);
  // A query plan shows as a tree instead of rows: each step, the index it uses, its cost and conditions.
  const planView = h('div', { class: 'plan scroll', attrs: { role: 'tree', 'aria-label': 'Query plan', tabindex: 0 } });
  planView.hidden = true;
  replace(document.getElementById('app')!, h('div', { class: 'k-bar' }, status, more), scroller, planView);
  planView.addEventListener('click', (event) => {
    const label = (event.target as HTMLElement).closest('.step');
    const item = label?.parentElement;
    if (!item || item.getAttribute('aria-expanded') === null) return;
    item.setAttribute('aria-expanded', String(item.getAttribute('aria-expanded') !== 'true'));
  });
  let shownPlan: PlanTreeNode[] | undefined;
  function renderPlan(nodes: PlanTreeNode[]): void {
    const item = (node: PlanTreeNode, level: number): HTMLLIElement => {
      const label = h('div', { class: 'step' }, h('span', { class: 'label' }, node.label), node.index ? h('span', { class: 'index', attrs: { title: 'index used' } }, node.index) : null);
      const details = node.details.length ? h('div', { class: 'details k-note' }, ...node.details.map((d) => h('div', {}, d))) : null;
      const li = h('li', { attrs: { role: 'treeitem', 'aria-level': level, ...(node.children.length ? { 'aria-expanded': 'true' } : {}) } }, label, details);
      if (node.children.length) li.appendChild(h('ul', { attrs: { role: 'group' } }, ...node.children.map((child) => item(child, level + 1))));
      return li;
    };
    replace(planView, h('ul', {}, ...nodes.map((node) => item(node, 1))));
  }

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
    // Remembered by row, so that the cell is still open when its row is drawn again.
    const row = shownRows?.[Number(td.parentElement!.dataset.index)];
    if (!row) return;
    const cells = opened.get(row) ?? new Set<number>();
    if (open) cells.add(td.cellIndex);
    else cells.delete(td.cellIndex);
    opened.set(row, cells);
  }
  const opened = new WeakMap<Cell[], Set<number>>();

  let shownColumns: Column[] | undefined;
  let shownRows: Cell[][] | undefined;
  grid.onChange(() => {
    const s = grid.state;
    planView.hidden = s.plan === undefined;
    scroller.hidden = s.plan !== undefined;
    if (s.plan !== shownPlan) {
      shownPlan = s.plan;
      if (s.plan) {
        renderPlan(s.plan);
        status.textContent = 'Query plan';
        status.className = 'k-note';
        more.hidden = true;
        markRendered();
        return;
      }
    }
    if (s.plan) return;
    status.textContent = [s.error, `${s.rows.length} row${s.rows.length === 1 ? '' : 's'}${s.more ? ', more available' : ''}`, s.loading ? 'loading…' : ''].filter(Boolean).join(' · ');
    status.className = s.error ? 'k-error' : 'k-note';
    more.hidden = !s.more;
    more.disabled = s.loading;
    if (s.columns !== shownColumns) renderHead((shownColumns = s.columns));
    for (const [i, th] of [...head.querySelectorAll('th')].entries()) {
      th.setAttribute('aria-sort', s.sort?.column === i ? (s.sort.descending ? 'descending' : 'ascending') : 'none');
    }
    if (s.rows !== shownRows) {
      shownRows = s.rows;
      table.setAttribute('aria-rowcount', String(s.rows.length + 1));
      paint(true);
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

  /** Rows drawn beyond each edge of the view, so that a fast scroll meets drawn rows. */
  const OVERSCAN = 20;
  /** A row's height in pixels, measured from the first row drawn (one line each: cells do not wrap until opened). */
  let rowHeight = 0;
  let painted = '';
  // The spacers: one empty cell across every column each, as tall as the rows they stand for.
  const topPad = h('tr', { class: 'pad', attrs: { 'aria-hidden': 'true' } }, h('td'));
  const bottomPad = h('tr', { class: 'pad', attrs: { 'aria-hidden': 'true' } }, h('td'));

  function rowElement(row: Cell[], index: number, columns: Column[]): HTMLTableRowElement {
    const tr = document.createElement('tr');
    tr.dataset.index = String(index);
    tr.setAttribute('aria-rowindex', String(index + 2));
    if (index % 2 === 1) tr.className = 'alt';
    const open = opened.get(row);
    for (let i = 0; i < columns.length; i++) {
      const view = cellView(row[i] ?? null, columns[i]!.type);
      const td = document.createElement('td');
      td.className = view.kind;
      td.textContent = view.text;
      if (view.full !== undefined) {
        td.dataset.full = view.full;
        td.dataset.short = view.text;
        td.tabIndex = 0;
        const isOpen = open?.has(i) === true;
        if (isOpen) {
          td.classList.add('open');
          td.textContent = view.full;
        }
        td.setAttribute('aria-expanded', String(isOpen));
      }
      tr.appendChild(td);
    }
    return tr;
  }

  /** Draws the rows in view: the window follows the scroll position; `force` after new rows or a sort. */
  function paint(force = false): void {
    const rows = shownRows ?? [];
    const columns = shownColumns ?? [];
    if (rows.length === 0) {
      body.replaceChildren();
      painted = '';
      markRendered();
      return;
    }
    if (rowHeight === 0) {
      body.replaceChildren(rowElement(rows[0]!, 0, columns));
      rowHeight = body.firstElementChild!.getBoundingClientRect().height || 22;
    }
    const inView = Math.ceil(scroller.clientHeight / rowHeight) + 1;
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowHeight) - OVERSCAN);
    const last = Math.min(rows.length, first + inView + 2 * OVERSCAN);
    const key = `${first}:${last}`;
    if (!force && key === painted) return;
    painted = key;
    for (const [pad, rowsFor] of [[topPad, first], [bottomPad, rows.length - last]] as const) {
      const cell = pad.firstElementChild as HTMLTableCellElement;
      cell.colSpan = Math.max(1, columns.length);
      cell.style.height = `${rowsFor * rowHeight}px`;
      pad.hidden = rowsFor === 0;
    }
    const fragment = document.createDocumentFragment();
    fragment.appendChild(topPad);
    for (let r = first; r < last; r++) fragment.appendChild(rowElement(rows[r]!, r, columns));
    fragment.appendChild(bottomPad);
    body.replaceChildren(fragment);
    markRendered();
  }

  /** Says (for tests and hosts that wait) that a tool result is drawn; not the empty grid before one arrives. */
  function markRendered(): void {
    if (resultAt !== undefined) document.body.dataset.rendered = 'true';
  }
  scroller.addEventListener('scroll', () => paint());
  new ResizeObserver(() => paint()).observe(scroller);

  void host.initialize({ name: app.name, version: '1' }).then((context) => {
    applyTheme(context);
    host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
    reportSize((size) => host.notify('ui/notifications/size-changed', size));
  });
}
