// Which lockstep models run on fitted parameters and which on the models' defaults, and the
// notes the charts carry about it. A model on defaults chatters between ±fs on a fresh store
// and hides the measurement, so the charts start with it hidden and say so.
import { h } from './dom';
import type { LockstepSet, RunRecord } from './runrecord';

/** Where one lockstep model's parameters came from, as the run records it
 *  (`bench_config.lockstep_sets`): `latest`/`set` (a stored set), `table` (bench.toml) or
 *  `defaults` (the model's defaults: nothing fitted). */
export type Source = Pick<LockstepSet, 'source' | 'set_id' | 'set_name'>;

/** The run's record of where each lockstep model's parameters came from, by model id. */
export function runSources(run: RunRecord): Map<string, Source> {
  return new Map((run.bench_config?.lockstep_sets ?? []).map((u) => [u.model, u]));
}

/** Without a run's record (the bench idle, no run yet): a model with a stored parameter set
 *  runs on it (the daemon's default is the newest set), the others on their defaults. */
export function sourcesFromSets(models: string[], sets: unknown): Map<string, Source> {
  const fitted = new Set((Array.isArray(sets) ? sets : []).map((s) => (s as { model_id?: unknown } | null)?.model_id));
  return new Map(models.map((m) => [m, fitted.has(m) ? { source: 'latest' } : { source: 'defaults' }]));
}

/** Whether model `m` runs on its defaults (a lockstep column `ID:x_plant` counts as `ID`). */
export function onDefaults(sources: Map<string, Source>, m: string): boolean {
  return sources.get(m.split(':')[0])?.source === 'defaults';
}

/** How a model's parameters read in a table: `set #3 “name”`, `given table`, `defaults, not fitted`. */
export function sourceText(s: Source | undefined): string {
  if (!s) return '—';
  if (s.source === 'defaults') return 'defaults, not fitted';
  if (s.source === 'table') return 'given table (spec or bench.toml)';
  return s.set_id != null ? `set #${s.set_id} “${s.set_name ?? ''}”` : 'newest fitted set';
}

/** The line above a group of charts: what the legend does, and which models start hidden. */
export function chartNotes(id: string, defaults: string[], plants: number): HTMLElement {
  return h(
    'div',
    { class: 'chart-notes', id },
    h('p', { class: 'legend-hint' }, 'Click a legend entry to show or hide its trace; drag across a chart to zoom in, double-click it to zoom out.'),
    defaults.length
      ? h(
          'p',
          { class: 'defaults-note', 'data-models': defaults.join(',') },
          h('strong', null, 'defaults, not fitted: '),
          defaults.join(', '),
          '. These models run on their default parameters, not on a fit of this bench: hidden until you click them in a legend.',
        )
      : null,
    plants ? h('p', { class: 'plants-note' }, `The position of the plant simulated with each model (${plants}) is hidden: click “(simulated plant)” in the position legend to show it.`) : null,
  );
}
