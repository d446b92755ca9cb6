// Recordings made elsewhere: the Runs page's Import form (POST /api/runs/import) and what the
// run page shows of an imported run (its source, units and time stamps, the friction–velocity
// scatter, the time series of the columns it had).
import { postFile, qs, ApiError } from '../api';
import { h, fmt, kvTable, notice, field } from '../dom';
import { timeChart } from '../timeseries';
import type { ImportAnswer, ImportedRun, ImportResults, SampleColumns } from '../answers';
import { xyPlot } from '../xyplot';

/** The content type a recording is sent with, from the chosen format or its extension. */
function contentType(format: string, name: string): string {
  const ext = name.toLowerCase().split('.').pop() ?? '';
  const f = format || ({ csv: 'csv', tsv: 'csv', txt: 'csv', mat: 'mat', parquet: 'parquet', pq: 'parquet' } as Record<string, string>)[ext] || '';
  return f === 'csv' ? 'text/csv' : f === 'mat' ? 'application/x-matlab-data' : f === 'parquet' ? 'application/vnd.apache.parquet' : 'application/octet-stream';
}

/** The Import form; `done(id)` is called with the new run's id. */
export function importForm(done: (id: number) => void): HTMLElement {
  const file = h('input', { id: 'import-file', type: 'file', accept: '.csv,.tsv,.txt,.mat,.parquet,.pq', required: true });
  const format = h('select', { id: 'import-format' }, ['', 'csv', 'mat', 'parquet'].map((f) => h('option', { value: f }, f || 'from the extension')));
  const columns = h('input', { id: 'import-columns', type: 'text', size: 34, placeholder: 't=time,x=position,u=force,friction=torque' });
  const scales = h('input', { id: 'import-scales', type: 'text', size: 20, placeholder: 'u=35.1507, x=0.001' });
  const geometry = h('select', { id: 'import-geometry' }, ['', 'rotary', 'linear'].map((g) => h('option', { value: g }, g || 'from the file (else rotary)')));
  const name = h('input', { id: 'import-name', type: 'text', size: 18, placeholder: 'the file name' });
  const msg = notice();
  msg.id = 'import-result';
  const submit = h('button', { type: 'submit', id: 'import-submit' }, 'Import');
  // A new file: the last answer no longer applies.
  file.addEventListener('change', () => msg.show(''));
  const form = h(
    'form',
    { id: 'import-form', class: 'row', 'aria-label': 'Import a recording' },
    field(file, 'File (CSV, MAT, Parquet)'),
    field(format, 'Format'),
    field(columns, 'Columns'),
    field(scales, 'Scales'),
    field(geometry, 'Geometry'),
    field(name, 'Name'),
    submit,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = file.files?.[0];
    if (!f) return msg.show('Choose a file first.', 'error');
    const scale = scales.value.split(',').map((s) => s.trim()).filter(Boolean);
    const params = new URLSearchParams(qs({ file: f.name, format: format.value, columns: columns.value.trim(), geometry: geometry.value, name: name.value.trim() }).slice(1));
    for (const s of scale) params.append('scale', s);
    submit.disabled = true;
    msg.show(`Importing ${f.name} (${fmt(f.size / 1e6)} MB)…`);
    try {
      const r = await postFile<ImportAnswer>(`/api/runs/import?${params}`, f, contentType(format.value, f.name));
      msg.show(`Imported run #${r.run_id}: ${r.stats?.samples} samples.`);
      done(r.run_id);
    } catch (err) {
      const e = err as ApiError;
      msg.show(`Not imported: ${e.message}`, 'error');
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', { class: 'card', 'aria-labelledby': 'import-h', id: 'runs-import' }, h('h2', { id: 'import-h' }, 'Import a recording'), form, msg);
}

/** Central differences of x against t (the ends one-sided): a velocity for display only. */
function derivative(t: number[], x: (number | null)[]): number[] {
  const n = t.length;
  return x.map((_, i) => {
    const a = Math.max(0, i - 1), b = Math.min(n - 1, i + 1);
    return b > a ? ((x[b] ?? NaN) - (x[a] ?? NaN)) / (t[b] - t[a]) : NaN;
  });
}

/**
 * The recording card of an imported run: its source and time stamps, and the friction–velocity
 * scatter of its samples `s` (as GET /api/runs/{id}/samples returns them).
 */
export function recordingCard(box: HTMLElement, run: ImportedRun, s: SampleColumns) {
  const spec = run.spec;
  const src = spec.source;
  const st: Partial<ImportResults> = run.results ?? {};
  const linear = spec.geometry === 'linear';
  const [force, pos] = linear ? ['N', 'm'] : ['N m', 'rad'];
  const pairs = (o: Record<string, unknown> | undefined, sep: string) => ['t', 'x', 'v', 'u', 'friction'].filter((k) => o?.[k] != null).map((k) => `${k}${sep}${String(o?.[k])}`).join(', ') || '—';
  box.append(
    kvTable([
      ['source', `${src.file} (${src.format}, ${Number(src.bytes).toLocaleString('en')} bytes)`],
      ['SHA-256', h('code', { id: 'import-sha256' }, String(src.sha256 ?? '—'))],
      ['columns', pairs(spec.columns, ' = ')],
      ['scales', pairs(spec.scales, ' × ')],
      ['units', `${pairs(spec.units, ' in ')} (${spec.geometry} bench, from ${spec.geometry_source})`],
      ['samples', fmt(st.samples ?? run.sample_count)],
      ['time', `${fmt(st.t_first)} … ${fmt(st.t_last)} s, step ${st.uniform ? `${fmt(st.dt_mean)} s (uniform)` : `${fmt(st.dt_min)} … ${fmt(st.dt_max)} s (mean ${fmt(st.dt_mean)} s; largest gap at ${fmt(st.largest_gap_at)} s)`}`],
    ]),
  );
  const has = (k: string) => spec.columns?.[k] != null;
  const t: number[] = s.t ?? [];
  // Gaps (null) as NaN: the scatter leaves non-finite points out.
  const nums = (c: (number | null)[]) => c.map((y) => y ?? NaN);
  const v = has('v') ? nums(s.v) : has('x') ? derivative(t, s.x) : null;
  const f = has('friction') ? nums(s.torque_sensor) : has('u') ? nums(s.torque_motor) : null;
  if (!v || !f) {
    box.append(h('p', { class: 'muted' }, 'No friction–velocity scatter: the recording has no velocity (or position) and no force column.'));
    return;
  }
  box.append(
    xyPlot({
      title: 'Friction vs velocity (every plotted sample)',
      xLabel: `velocity [${pos}/s]${has('v') ? '' : ' (central differences of x)'}`,
      yLabel: has('friction') ? `measured friction [${force}]` : `applied u [${force}] (no friction column)`,
      series: [{ label: 'samples', x: v, y: f, mode: 'points', radius: 1.2 }],
      testId: 'imported-scatter',
    }),
  );
}

/** The time series of an imported run: one chart per quantity it had. */
export function recordingCharts(grid: HTMLElement, run: ImportedRun, s: SampleColumns, charts: { destroy(): void }[]) {
  const spec: NonNullable<ImportedRun['spec']> = run.spec ?? {};
  const linear = spec.geometry === 'linear';
  const [force, pos] = linear ? ['N', 'm'] : ['N m', 'rad'];
  const has = (k: string) => spec.columns?.[k] != null;
  const mk = (title: string, unit: string, labels: string[], data: (number | null)[][]) => {
    const el = h('div', { class: 'chart' });
    grid.append(el);
    const c = timeChart(el, title, unit, labels, 620, 220);
    c.set([s.t, ...data]);
    charts.push(c);
  };
  if (has('x')) mk('Position', `x [${pos}]`, ['x'], [s.x]);
  if (has('v')) mk('Velocity', `v [${pos}/s]`, ['v'], [s.v]);
  const forces: [string, (number | null)[]][] = [];
  if (has('u')) forces.push(['u (applied)', s.torque_motor]);
  if (has('friction')) forces.push(['friction (measured)', s.torque_sensor]);
  if (forces.length) mk(linear ? 'Force' : 'Torque', `[${force}]`, forces.map((f) => f[0]), forces.map((f) => f[1]));
}
