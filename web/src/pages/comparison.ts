// A model comparison (`POST /api/comparisons`, a run's `comparisons`): the models ranked by
// validation error, their parameters and verdicts, and the validation MSE as bars.
import { h, fmt } from '../dom';
import type { Schemas } from '../api';

type Table = Schemas['ComparisonTable'];
type ComparisonRow = Schemas['ComparisonRow'];
type Scores = Schemas['ComparisonScores'];
type Verdict = Schemas['FitVerdict'];

/** A comparison as the page shows it: its table and id, and (a run's `comparisons`) the runs
 * it was estimated and validated on. */
export interface ComparisonView {
  table: Table;
  id: number;
  estimate_runs?: number[];
  validate_runs?: number[];
}

/** `POST /api/comparisons`'s answer: the table itself, with the stored comparison's id. */
export const answered = (a: Schemas['Compared']): ComparisonView => ({ table: a, id: a.comparison_id });

/** One of a run's `comparisons`. */
export const stored = (c: Schemas['StoredComparison']): ComparisonView => ({
  table: c.table,
  id: c.id,
  estimate_runs: c.estimate_runs,
  validate_runs: c.validate_runs,
});

export function comparisonTable(c: ComparisonView): HTMLElement {
  const table = c.table;
  const rows = table.rows;
  const residual = table.residual;
  const runs = (ids: number[] | undefined, data: Table['estimation_data']) => (ids?.length ? `runs ${ids.map((i) => `#${i}`).join(', ')}` : `${data.length} data set(s)`);
  const mse = (s: Scores, k: 'all' | 'presliding' | 'gross_sliding') => fmt(s[k]);
  const fitted = (r: ComparisonRow) => {
    const p = r.params && typeof r.params === 'object' ? Object.entries(r.params) : [];
    const nums = p.filter((e): e is [string, number] => typeof e[1] === 'number');
    return nums.length ? nums.map(([k, v]) => `${k} = ${fmt(v)}`).join(', ') : '—';
  };
  const ranked = [...rows].sort((a, b) => a.rank - b.rank);
  const id = c.id;
  const head = ['rank', 'model', 'parameters', 'verdict', 'est. MSE', 'est. presliding', 'est. gross sliding', 'val. MSE', 'val. presliding', 'val. gross sliding'];
  return h(
    'div',
    { class: 'comparison' },
    h(
      'p',
      null,
      `Comparison #${id}: estimated on ${runs(c.estimate_runs, table.estimation_data)}, validated on ${runs(c.validate_runs, table.validation_data)}; mean squared ${residual}, ranked by validation.`,
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
                  h('td', null, String(r.rank)),
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
  return h('span', { class: 'bad', title: v.reasons.join('\n') }, `${v.status}: ${v.reasons.join('; ')}`);
}

/** Validation MSE per model as horizontal bars (shortest is best), labelled with the value. */
function mseBars(rows: ComparisonRow[], residual: string): HTMLElement {
  const val = (r: ComparisonRow) => (typeof r.validation.all === 'number' && Number.isFinite(r.validation.all) ? r.validation.all : null);
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
