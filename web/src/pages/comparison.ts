// A model comparison (`POST /api/comparisons`, a run's `comparisons`): the models ranked by
// validation error, their parameters and verdicts, and the validation MSE as bars.
import { h, fmt } from '../dom';
import type { ComparisonRecord } from '../answers';

/** Mean squared residual over a data set, in all and by regime. */
interface Scores {
  all?: number | null;
  presliding?: number | null;
  gross_sliding?: number | null;
}

/** A fit's verdict: `ok`, or `warning` with its reasons. */
interface Verdict {
  status: string;
  reasons?: string[];
}

/** One model of a comparison table (`friction::compare`'s row). */
interface ComparisonRow {
  rank?: number | null;
  model: string;
  params?: unknown;
  error?: string | null;
  fit?: { verdict?: Verdict | null } | null;
  estimation?: Scores | null;
  validation?: Scores | null;
}

/** The table: its rows, the residual it scores and the data sets, when not given as run ids. */
interface Table {
  rows?: ComparisonRow[];
  residual?: string;
  estimation_data?: unknown[];
  validation_data?: unknown[];
}

export function comparisonTable(c: ComparisonRecord): HTMLElement {
  // The stored comparison's `table`, or (an older answer) the table itself or its rows.
  const raw: unknown = c.table ?? c;
  const table: Table = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
  const rows: ComparisonRow[] = Array.isArray(table.rows) ? table.rows : Array.isArray(raw) ? raw : [];
  const residual = table.residual ?? 'residual';
  const runs = (ids: number[] | undefined, data: unknown[] | undefined) =>
    Array.isArray(ids) && ids.length ? `runs ${ids.map((i) => `#${i}`).join(', ')}` : Array.isArray(data) ? `${data.length} data set(s)` : '—';
  const mse = (s: Scores | null | undefined, k: keyof Scores) => fmt(s?.[k]);
  const fitted = (r: ComparisonRow) => {
    const p = r.params && typeof r.params === 'object' ? Object.entries(r.params) : [];
    const nums = p.filter((e): e is [string, number] => typeof e[1] === 'number');
    return nums.length ? nums.map(([k, v]) => `${k} = ${fmt(v)}`).join(', ') : '—';
  };
  const ranked = [...rows].sort((a, b) => (a.rank ?? 1e9) - (b.rank ?? 1e9));
  const id = c.id ?? c.comparison_id;
  const head = ['rank', 'model', 'parameters', 'verdict', 'est. MSE', 'est. presliding', 'est. gross sliding', 'val. MSE', 'val. presliding', 'val. gross sliding'];
  return h(
    'div',
    { class: 'comparison' },
    h(
      'p',
      null,
      `Comparison ${id != null ? `#${id}` : ''}: estimated on ${runs(c.estimate_runs, table?.estimation_data)}, validated on ${runs(c.validate_runs, table?.validation_data)}; mean squared ${residual}, ranked by validation.`,
    ),
    rows.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'data comparison-table' },
            h('caption', { class: 'sr-only' }, 'Models ranked by validation error'),
            h('thead', null, h('tr', null, head.map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              null,
              ranked.map((r) =>
                h(
                  'tr',
                  { 'data-model': r.model },
                  h('td', null, String(r.rank ?? '—')),
                  h('th', { scope: 'row' }, r.model),
                  h('td', null, r.error ? h('span', { class: 'bad' }, r.error) : fitted(r)),
                  h('td', null, verdict(r.fit?.verdict)),
                  h('td', null, mse(r.estimation, 'all')),
                  h('td', null, mse(r.estimation, 'presliding')),
                  h('td', null, mse(r.estimation, 'gross_sliding')),
                  h('td', null, mse(r.validation, 'all')),
                  h('td', null, mse(r.validation, 'presliding')),
                  h('td', null, mse(r.validation, 'gross_sliding')),
                ),
              ),
            ),
          ),
        )
      : h('pre', null, JSON.stringify(table, null, 2)),
    rows.length ? mseBars(ranked, residual) : null,
  );
}

/** A fit's verdict: `ok`, or `warning` with its reasons. */
function verdict(v: Verdict | null | undefined): HTMLElement | string {
  if (!v) return '—';
  if (v.status === 'ok') return 'ok';
  return h('span', { class: 'bad', title: (v.reasons ?? []).join('\n') }, `${v.status}: ${(v.reasons ?? []).join('; ')}`);
}

/** Validation MSE per model as horizontal bars (shortest is best), labelled with the value. */
function mseBars(rows: ComparisonRow[], residual: string): HTMLElement {
  const val = (r: ComparisonRow) => (typeof r.validation?.all === 'number' && Number.isFinite(r.validation.all) ? r.validation.all : null);
  const max = Math.max(1e-300, ...rows.map((r) => val(r) ?? 0));
  return h(
    'figure',
    { class: 'bars', 'aria-label': `Validation mean squared ${residual} per model` },
    h('figcaption', null, `Validation mean squared ${residual} (shorter is better)`),
    rows.map((r) => {
      const v = val(r);
      return h(
        'div',
        { class: 'bar-row' },
        h('span', { class: 'bar-label' }, r.model),
        h('span', { class: 'bar', style: `width: ${v == null ? 0 : Math.max(0.5, (100 * v) / max)}%` }),
        h('span', { class: 'bar-value' }, v == null ? 'failed' : fmt(v)),
      );
    }),
  );
}
