// Tiny DOM helpers: no framework.

type Child = Node | string | number | null | undefined | false;
/** Attributes; `on…` functions become listeners, `value`/`checked`/`selected`/`disabled` properties. */
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
      else if (k === 'class') el.className = String(v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'disabled') Reflect.set(el, k, v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el: Node, children: (Child | Child[])[]) {
  for (const c of children) {
    if (Array.isArray(c)) append(el, c);
    else if (c === null || c === undefined || c === false) continue;
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** A form field: `el` under its label (the label names `el` by its id). */
export const field = (el: HTMLElement, label: string) => h('div', { class: 'field' }, h('label', { for: el.id }, label), el);

export function clear(el: Element, ...children: (Child | Child[])[]) {
  el.replaceChildren();
  append(el, children);
}

let uid = 0;
export const nextId = (p: string) => `${p}-${++uid}`;

/** A number for people: 4 significant digits, SI-ish. */
export function fmt(x: unknown, digits = 4): string {
  if (x === null || x === undefined) return '—';
  if (typeof x !== 'number') return String(x);
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  // Counts (samples, ids, overruns) exactly: 4 significant digits made 31 842 samples 31 840.
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toString();
}

export function duration(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - 60 * m)} s`;
  const hr = Math.floor(m / 60);
  return `${hr} h ${m - 60 * hr} min`;
}

/** A message area (role=status) that pages write results and errors to. */
export function notice(): HTMLElement & { show(msg: string, kind?: 'ok' | 'error'): void } {
  const el = h('p', { class: 'notice', role: 'status', 'aria-live': 'polite' });
  return Object.assign(el, {
    show(msg: string, kind: 'ok' | 'error' = 'ok') {
      el.textContent = msg;
      el.className = `notice ${kind}`;
    },
  });
}

/** A key/value table. */
export function kvTable(rows: [string, Child | Child[]][], caption?: string): HTMLTableElement {
  return h(
    'table',
    { class: 'kv' },
    caption ? h('caption', null, caption) : null,
    h('tbody', null, rows.map(([k, v]) => h('tr', null, h('th', { scope: 'row' }, k), h('td', null, v)))),
  );
}

/** A data table from rows of objects (a cell that is a Node, e.g. a link, as it is); columns from the first row unless given. */
export function dataTable<T extends object>(rows: readonly T[], columns?: string[], caption?: string): HTMLElement {
  if (!rows.length) return h('p', { class: 'muted' }, 'none');
  const cols = columns ?? Object.keys(rows[0]);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'data' },
      caption ? h('caption', null, caption) : null,
      h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        rows.map((r) =>
          h(
            'tr',
            null,
            cols.map((c) => {
              const v: unknown = (r as Record<string, unknown>)[c];
              return h('td', null, v instanceof Node ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : fmt(v));
            }),
          ),
        ),
      ),
    ),
  );
}
