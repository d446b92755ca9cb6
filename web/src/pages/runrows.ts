// The runs list's rows, updated in place: a row per run id is kept across refreshes and only
// its changed cells are rewritten, so a link that has keyboard focus keeps it while the list
// refreshes every few seconds (rebuilding the table would drop it).
import { RunSummary } from '../api';
import { h, fmt } from '../dom';

const COLUMNS = ['id', 'bench', 'kind', 'name', 'status', 'created', 'started', 'finished', 'samples'];

/** The list's header row. */
export const runsHead = () => h('thead', null, h('tr', null, COLUMNS.map((c) => h('th', { scope: 'col' }, c))));

/** Each cell's text after the id's link. */
function cells(r: RunSummary): string[] {
  return [r.bench_id || '—', r.kind, r.name, r.status, r.created_at, r.started_at ?? '—', r.finished_at ?? '—', fmt(r.sample_count)];
}

function newRow(r: RunSummary): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-run-id': String(r.id) },
    h('td', null, h('a', { href: `#/runs/${r.id}` }, `#${r.id}`)),
    h('td', { class: 'bench' }),
    h('td'),
    h('td'),
    h('td', { class: 'status' }),
    h('td'),
    h('td'),
    h('td'),
    h('td'),
  );
}

/** Writes `r` into `tr`, touching only the cells whose text changed. */
function fill(tr: HTMLTableRowElement, r: RunSummary) {
  if (tr.dataset.status !== r.status) {
    tr.dataset.status = r.status;
    tr.cells[4].className = `status ${r.status}`;
  }
  cells(r).forEach((text, i) => {
    const td = tr.cells[i + 1];
    if (td.textContent !== text) td.textContent = text;
  });
}

/** Makes `tbody` show `runs` in order: rows of runs gone are removed, new ones inserted, rows
 *  already in place are neither moved nor rebuilt. */
export function syncRows(tbody: HTMLElement, runs: RunSummary[]) {
  const have = new Map<string, HTMLTableRowElement>();
  for (const tr of Array.from(tbody.children) as HTMLTableRowElement[]) have.set(tr.dataset.runId ?? '', tr);
  const keep = new Set(runs.map((r) => String(r.id)));
  for (const [id, tr] of have) if (!keep.has(id)) tr.remove();
  runs.forEach((r, i) => {
    const tr = have.get(String(r.id)) ?? newRow(r);
    fill(tr, r);
    if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] ?? null);
  });
}
