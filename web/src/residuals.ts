// "Which model fits this run" at a glance: each lockstep model's residual RMS (sensor − model)
// over the samples the run page loaded, ranked, with where its parameters came from.
import { h } from './dom';
import { engValue } from './eng';
import { Source, sourceText } from './lockstep';

export interface ResidualRow {
  model: string;
  rms: number | null;
  /** Samples where both the sensor and the model had a value. */
  n: number;
}

/** Root mean square of `measured − model` over the samples where both are finite. */
export function residualRms(measured: (number | null)[], model: (number | null)[]): { rms: number | null; n: number } {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < measured.length; i++) {
    const a = measured[i], b = model[i];
    if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b)) continue;
    sum += (a - b) ** 2;
    n++;
  }
  return { rms: n ? Math.sqrt(sum / n) : null, n };
}

/** Models ranked by residual RMS (smallest first; a model with no sample last). */
export function rankResiduals(models: string[], outs: (number | null)[][], sensor: (number | null)[]): ResidualRow[] {
  const rows = models.map((model, i) => ({ model, ...residualRms(sensor, outs[i] ?? []) }));
  return rows.sort((a, b) => (a.rms ?? Infinity) - (b.rms ?? Infinity));
}

/** The table, headed by the best fitted model; the RMS of the measured torque beside it as the
 *  scale (a model no better than predicting zero leaves about that much). */
export function residualTable(rows: ResidualRow[], sensor: (number | null)[], sources: Map<string, Source>, force: string, points: number): HTMLElement {
  const zero = residualRms(sensor, sensor.map(() => 0)).rms;
  const isDefault = (m: string) => sources.get(m)?.source === 'defaults';
  const best = rows.find((r) => r.rms != null && !isDefault(r.model));
  const pct = (x: number | null) => (x == null || zero == null || zero === 0 ? '—' : `${((100 * x) / zero).toFixed(1)} %`);
  return h(
    'section',
    { class: 'card', id: 'residual-rms', 'aria-labelledby': 'rms-h' },
    h('h2', { id: 'rms-h' }, 'Which model fits: residual RMS'),
    h(
      'p',
      { id: 'residual-best' },
      best
        ? `Best fitted model on this run: ${best.model}, residual RMS ${engValue(best.rms, force)} (${pct(best.rms)} of the measured torque's RMS, ${engValue(zero, force)}).`
        : 'No lockstep model on this run has fitted parameters: every residual below is of a model on its defaults. Fit one on the Models & fits page.',
    ),
    h(
      'table',
      { class: 'data', id: 'residual-table' },
      h('caption', null, `RMS of sensor − model over the ${points} points loaded; smaller is better`),
      h('thead', null, h('tr', null, ['rank', 'model', 'parameters', 'residual RMS', 'of the torque RMS', 'points'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        rows.map((r, i) =>
          h(
            'tr',
            { 'data-model': r.model, 'data-rms': r.rms == null ? '' : String(r.rms), class: isDefault(r.model) ? 'muted' : undefined },
            h('td', null, r.rms == null ? '—' : String(i + 1)),
            h('th', { scope: 'row' }, r.model),
            h('td', null, sourceText(sources.get(r.model))),
            h('td', null, engValue(r.rms, force)),
            h('td', null, pct(r.rms)),
            h('td', null, String(r.n)),
          ),
        ),
      ),
    ),
  );
}
