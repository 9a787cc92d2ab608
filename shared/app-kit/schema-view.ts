/**
 * A schema view page (the SQLite and PostgreSQL servers' apps): the tables a schema tool was about,
 * each with its columns (type, primary key, NOT NULL, what the column references), and the list of
 * foreign keys between them; a reference jumps to the table it names. Names are written as text
 * (never markup): a table or column may be named anything.
 */
import './schema.css';
import { applyTheme, arrowNavigation, h, replace, reportSize, windowPort } from './dom.js';
import { HostConnection } from './rpc.js';
import { SchemaController, foreignKeyLinks, tableKey, tableLabel, type SchemaOptions, type SchemaTable } from './schema-model.js';

export function mountSchema(app: { name: string }, options: SchemaOptions): void {
  const host = new HostConnection(windowPort());
  const schema = new SchemaController(host, options);

  const status = h('span', { class: 'k-note', attrs: { role: 'status', 'aria-live': 'polite' } });
  const filter = h('input', { attrs: { type: 'search', placeholder: 'Filter tables and columns', 'aria-label': 'Filter tables and columns' } });
  const more = h('button', { attrs: { type: 'button' } }, 'Load more tables');
  more.addEventListener('click', () => void schema.loadMore());
  const keys = h('ul', { class: 'fks k-mono' });
  const keysPanel = h('nav', { class: 'fk-panel', attrs: { 'aria-label': 'Foreign keys' } }, h('h2', {}, 'Foreign keys'), keys);
  const cards = h('main', { class: 'cards' });
  replace(document.getElementById('app')!, h('div', { class: 'k-bar' }, status, filter, more), h('div', { class: 'schema' }, keysPanel, cards));
  // One tab stop for the cards: the arrow keys move between their headings.
  arrowNavigation(cards, '.card:not([hidden]) > h2');

  /** Each table's card, to jump to from a reference. */
  const cardOf = new Map<string, HTMLElement>();

  function reference(table: SchemaTable['foreignKeys'][number], what: string): HTMLButtonElement {
    const target = tableKey(table.schema, table.table);
    const button = h('button', { class: 'ref', attrs: { type: 'button', title: `Go to ${tableLabel(table.schema, table.table)}` } }, what);
    button.dataset.target = target;
    return button;
  }

  // A reference (in a card or the list) shows the table it names.
  document.getElementById('app')!.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button.ref');
    const card = button?.dataset.target !== undefined ? cardOf.get(button.dataset.target) : undefined;
    if (!card) return;
    card.hidden = false;
    const heading = card.querySelector('h2')!;
    for (const other of cards.querySelectorAll<HTMLElement>('.card > h2')) other.tabIndex = -1;
    heading.tabIndex = 0;
    heading.scrollIntoView({ block: 'start' });
    heading.focus();
  });

  function renderCard(table: SchemaTable): HTMLElement {
    const referencing = new Map<string, SchemaTable['foreignKeys'][number][]>();
    for (const key of table.foreignKeys) for (const column of key.columns) referencing.set(column, [...(referencing.get(column) ?? []), key]);
    const rows = table.columns.map((column) => {
      const refs = (referencing.get(column.name) ?? []).map((key) => reference(key, `${tableLabel(key.schema, key.table)}.${key.references[key.columns.indexOf(column.name)] ?? ''}`));
      const tr = h(
        'tr',
        {},
        h('td', { class: 'col' }, column.name),
        h('td', { class: 'type' }, column.type || 'ANY'),
        h('td', { class: 'pk' }, column.primaryKey > 0 ? (table.columns.filter((c) => c.primaryKey > 0).length > 1 ? `PK ${column.primaryKey}` : 'PK') : ''),
        h('td', { class: 'nn' }, column.notNull ? 'NOT NULL' : ''),
        h('td', { class: 'refs' }, ...refs),
      );
      return tr;
    });
    const heading = h('h2', { attrs: { tabindex: -1 } }, h('span', { class: 'name' }, tableLabel(table.schema, table.name)), ' ', h('span', { class: 'kind' }, table.kind));
    const card = h(
      'section',
      { class: 'card', attrs: { 'aria-label': tableLabel(table.schema, table.name) } },
      heading,
      h(
        'table',
        { class: 'columns k-mono' },
        h('thead', {}, h('tr', {}, ...['Column', 'Type', 'Key', 'Null', 'References'].map((name) => h('th', { attrs: { scope: 'col' } }, name)))),
        h('tbody', {}, ...rows),
      ),
    );
    card.dataset.table = tableKey(table.schema, table.name);
    return card;
  }

  function applyFilter(): void {
    const wanted = filter.value.trim().toLowerCase();
    for (const card of cards.querySelectorAll<HTMLElement>('.card')) {
      card.hidden = wanted !== '' && !(card.textContent ?? '').toLowerCase().includes(wanted);
    }
  }
  filter.addEventListener('input', applyFilter);

  schema.onChange(() => {
    const s = schema.state;
    const links = foreignKeyLinks(s.tables);
    status.textContent = [s.error, `${s.tables.length} table${s.tables.length === 1 ? '' : 's'}${s.more ? ', more available' : ''}, ${links.length} foreign key${links.length === 1 ? '' : 's'}`, s.loading ? 'loading…' : '']
      .filter(Boolean)
      .join(' · ');
    status.className = s.error ? 'k-error' : 'k-note';
    more.hidden = !s.more;
    more.disabled = s.loading;
    document.body.dataset.rendered = String(!s.loading);
    if (s.loading) return;
    cardOf.clear();
    replace(cards, ...s.tables.map((table) => {
      const card = renderCard(table);
      cardOf.set(card.dataset.table!, card);
      return card;
    }));
    cards.querySelector<HTMLElement>('.card > h2')?.setAttribute('tabindex', '0');
    replace(
      keys,
      ...links.map(({ from, key }) => h(
        'li',
        {},
        reference({ ...key, schema: from.schema, table: from.name }, `${tableLabel(from.schema, from.name)} (${key.columns.join(', ')})`),
        ' → ',
        reference(key, `${tableLabel(key.schema, key.table)} (${key.references.join(', ')})`),
      )),
    );
    keysPanel.hidden = links.length === 0;
    applyFilter();
  });

  void host.initialize({ name: app.name, version: '1' }).then((context) => {
    applyTheme(context);
    host.on('ui/notifications/host-context-changed', () => applyTheme(host.context));
    reportSize((size) => host.notify('ui/notifications/size-changed', size));
  });
}
