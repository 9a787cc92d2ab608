/**
 * Building the page from data someone else wrote (log lines, cells, diffs): every string becomes a
 * text node or an attribute value, never markup. There is no way here to set innerHTML, an event
 * handler attribute, a style attribute or a URL.
 */
import type { HostContext, Port } from './rpc.js';

type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  /** Attributes: `on…`, `style`, `href`, `src` and `srcdoc` are refused (behaviour and URLs come from code). */
  attrs?: Record<string, string | number | boolean | undefined>;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
}

const REFUSED = /^(on|style$|href$|src$|srcdoc$|xlink:href$|formaction$|action$)/i;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === undefined || value === false) continue;
    if (REFUSED.test(name)) throw new Error(`h(): the attribute ${name} is not set from data`);
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [event, listener] of Object.entries(props.on ?? {})) if (listener) el.addEventListener(event, listener);
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The host's theme on the page: `data-theme`, `color-scheme`, and the host's CSS variables (names starting with `--` only). */
export function applyTheme(context: HostContext): void {
  const root = document.documentElement;
  if (context.theme === 'light' || context.theme === 'dark') {
    root.dataset.theme = context.theme;
    root.style.colorScheme = context.theme;
  }
  for (const [name, value] of Object.entries(context.styles?.variables ?? {})) {
    if (name.startsWith('--') && typeof value === 'string') root.style.setProperty(name, value);
  }
}

/** The host window as a port (messages from the parent window only). */
export function windowPort(): Port {
  return {
    post: (message) => window.parent.postMessage(message, '*'),
    listen: (handler) => {
      const listener = (event: MessageEvent): void => {
        if (event.source === window.parent) handler(event.data);
      };
      window.addEventListener('message', listener);
      return () => window.removeEventListener('message', listener);
    },
  };
}

/** Tells the host the page's size whenever it changes, so the frame fits the content. */
export function reportSize(send: (params: { width: number; height: number }) => void): void {
  let last = '';
  const observer = new ResizeObserver(() => {
    const width = Math.ceil(document.documentElement.scrollWidth);
    const height = Math.ceil(document.documentElement.scrollHeight);
    const key = `${width}x${height}`;
    if (key !== last) {
      last = key;
      send({ width, height });
    }
  });
  observer.observe(document.documentElement);
}

/**
 * Arrow keys move the focus between the items a container holds (rows of a list, bars of a chart),
 * Home and End to the first and last: one tab stop for the whole container.
 */
export function arrowNavigation(container: HTMLElement, itemSelector: string): void {
  container.addEventListener('keydown', (event) => {
    const items = [...container.querySelectorAll<HTMLElement>(itemSelector)];
    const at = items.indexOf(document.activeElement as HTMLElement);
    const step: Record<string, number> = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, Home: -Infinity, End: Infinity };
    const move = step[event.key];
    if (move === undefined || items.length === 0) return;
    event.preventDefault();
    const next = Math.max(0, Math.min(items.length - 1, (at < 0 ? 0 : at) + (Number.isFinite(move) ? move : move > 0 ? items.length : -items.length)));
    for (const item of items) item.tabIndex = -1;
    items[next]!.tabIndex = 0;
    items[next]!.focus();
  });
}
