// Runs: a searchable list and a run page with its plots, tables, log, provenance and exports.
import { get, qs, post, RunSummary, ApiError, withToken } from '../api';
import type { SampleColumns } from '../answers';
import { h, clear, fmt, kvTable, dataTable, notice, field } from '../dom';
import { runsHead, syncRows } from './runrows';
import { live, splitModels } from '../live';
import { timeChart, symmetricScale, Scale } from '../timeseries';
import { xyPlot, XYSeries, PALETTE } from '../xyplot';
import { importForm, recordingCard, recordingCharts } from './imported';
import { fittedCurves } from './curves';
import { annotateCard } from './annotate';
import { chartNotes, onDefaults, runSources } from '../lockstep';
import { rankResiduals, residualTable } from '../residuals';

const KINDS = ['constant_velocity_sweep', 'presliding', 'frictional_lag', 'torque_ramp', 'breakaway_staircase', 'dwell_time', 'prbs', 'validation_profile', 'compensation_trial', 'imported'];
const STATUSES = ['queued', 'running', 'completed', 'aborted', 'failed', 'interrupted'];

/** `benchId`: from `#/runs?bench=ID` (the Fleet page's links), the bench filter to start with. */
export function runsPage(root: HTMLElement, benchId?: string): () => void {
  const kind = h('select', { id: 'runs-kind' }, h('option', { value: '' }, 'any'), KINDS.map((k) => h('option', { value: k }, k)));
  const bench = h('input', { id: 'runs-bench', type: 'text', placeholder: 'any', pattern: '[A-Za-z0-9._\\-]{1,64}', size: 10, value: benchId ?? '' });
  const status = h('select', { id: 'runs-status' }, h('option', { value: '' }, 'any'), STATUSES.map((k) => h('option', { value: k }, k)));
  const tag = h('input', { id: 'runs-tag', type: 'text', placeholder: 'any', pattern: '[\\p{L}\\p{N}._:\\-]{1,64}', size: 10 });
  const since = h('input', { id: 'runs-since', type: 'date' });
  const until = h('input', { id: 'runs-until', type: 'date' });
  const text = h('input', { id: 'runs-text', type: 'search', placeholder: 'name, kind, tag, notes or #id' });
  const list = h('div', { id: 'runs-list', 'aria-live': 'polite' });
  let offset = 0;
  const limit = 50;
  const form = h(
    'form',
    { class: 'row filters', role: 'search', 'aria-label': 'Filter runs' },
    field(kind, 'Kind'),
    field(bench, 'Bench'),
    field(status, 'Status'),
    field(tag, 'Tag'),
    field(since, 'Since'),
    field(until, 'Until'),
    field(text, 'Search'),
    h('button', { type: 'submit' }, 'Search'),
  );
  const imported = importForm((id) => {
    location.hash = `#/runs/${id}`;
  });
  root.append(h('h1', null, 'Runs'), imported, form, list);

  // The list's parts outlive a refresh: rows are updated in place (see runrows.ts).
  const total = h('p', { id: 'runs-total' });
  const tbody = h('tbody');
  const table = h('table', { class: 'data', id: 'runs-table' }, runsHead(), tbody);
  const empty = h('p', { class: 'muted' }, 'No runs.');
  const newer = h('button', { type: 'button', onclick: () => { offset = Math.max(0, offset - limit); load(); } }, 'Newer');
  const older = h('button', { type: 'button', onclick: () => { offset += limit; load(); } }, 'Older');
  const error = h('p', { class: 'bad', hidden: true });
  list.append(error, total, table, empty, h('div', { class: 'row' }, newer, older));
  let refreshes = 0;
  const load = async () => {
    try {
      const page = await get<{ runs: RunSummary[]; total: number }>(
        `/api/runs${qs({ kind: kind.value, bench: bench.value.trim(), status: status.value, tag: tag.value.trim(), q: text.value.trim(), since: since.value, until: until.value ? `${until.value}T23:59:59Z` : '', limit, offset })}`,
      );
      const runs = page.runs;
      error.hidden = true;
      const count = `${page.total} runs match; showing ${offset + 1}–${offset + page.runs.length}`;
      if (total.textContent !== count) total.textContent = count;
      syncRows(tbody, runs);
      table.hidden = !runs.length;
      empty.hidden = !!runs.length;
      newer.disabled = offset === 0;
      older.disabled = offset + limit >= page.total;
      list.dataset.refreshes = String(++refreshes);
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    offset = 0;
    load();
  });
  load();
  const off = live.on((...[ev]) => {
    if (ev === 'run') load();
  });
  const tick = window.setInterval(load, 3000);
  return () => {
    off();
    clearInterval(tick);
  };
}

export function runPage(root: HTMLElement, idText?: string): () => void {
  const id = Number(idText);
  const head = h('div');
  const body = h('div');
  root.append(head, body);
  let charts: { destroy(): void }[] = [];
  let lastStatus = '';
  let alive = true;

  const load = async () => {
    let run: any;
    try {
      run = await get(`/api/runs/${id}`);
    } catch (e) {
      clear(head, h('h1', null, `Run #${id}`), h('p', { class: 'bad' }, (e as ApiError).message));
      return;
    }
    if (!alive) return;
    const statusKey = `${run.status}/${run.sample_count}/${run.results ? 1 : 0}`;
    if (statusKey === lastStatus) return;
    const final = !['queued', 'running'].includes(run.status);
    lastStatus = statusKey;
    renderHead(head, run);
    if (final || !body.childElementCount) {
      charts.forEach((c) => c.destroy());
      charts = [];
      await renderBody(body, run, charts);
    }
  };
  load();
  const tick = window.setInterval(() => {
    if (!['completed', 'aborted', 'failed', 'interrupted'].includes(lastStatus.split('/')[0])) load();
  }, 2000);
  return () => {
    alive = false;
    clearInterval(tick);
    charts.forEach((c) => c.destroy());
  };
}

/** Why the run stopped, by its stable `reason_code` (never by the text): the code as a tag, and
 *  what the operator does next where the code says it (a drive fault is reset on the Bench page). */
function stopNote(run: any): HTMLElement | null {
  const code: string | null = run.reason_code ?? null;
  if (!code) return null;
  const next: Record<string, string> = {
    drive_fault: 'The drive fault stays latched: find its cause, then reset it on the Bench page; the queue stays paused until resumed.',
    drive_disabled: 'The drive left operation enabled on its own: check its enable input and its own fault log.',
    comms_fault: 'A device stopped answering: check its cabling and link settings.',
    sensor_stall: 'The torque sensor stopped publishing new samples: check the sensor and its link.',
    sensor_fault: 'The torque sensor reported a fault: check the sensor.',
    estop: 'The e-stop is latched: inspect the bench, then reset the latch and resume the queue.',
    limit_breach: 'Check the spec, the gains and the bench limits before running it again.',
    interrupted: 'The process recording the run died: check the bench before resuming the queue.',
  };
  return h(
    'p',
    { id: 'stop-reason', class: `stop-reason ${code}` },
    h('span', { class: 'tag', title: 'reason_code' }, code),
    next[code] ? ' ' : null,
    next[code] ? (code === 'drive_fault' ? h('a', { href: '#/bench' }, next[code]) : next[code]) : null,
  );
}

function renderHead(head: HTMLElement, run: any) {
  const msg = notice();
  // An import is written by the daemon itself: nothing to stop or abort.
  const live_ = ['queued', 'running'].includes(run.status) && run.kind !== 'imported';
  const act = async (what: 'stop' | 'abort') => {
    try {
      await post(`/api/runs/${run.id}/${what}`);
      msg.show(`${what} requested`);
    } catch (e) {
      msg.show((e as ApiError).message, 'error');
    }
  };
  // A run cut short and not continued yet (the last of its chain) can be resumed.
  const chain: number[] = run.chain ?? [run.id];
  const resumable =
    ['interrupted', 'failed', 'aborted'].includes(run.status) && run.kind !== 'imported' && chain[chain.length - 1] === run.id;
  const resume = async () => {
    try {
      const next = await post<{ id: number }>(`/api/runs/${run.id}/resume`);
      location.hash = `#/runs/${next.id}`;
    } catch (e) {
      msg.show((e as ApiError).message, 'error');
    }
  };
  clear(
    head,
    h('h1', null, `Run #${run.id}: ${run.name} `, h('span', { class: `status ${run.status}`, id: 'run-status' }, run.status)),
    h('p', null, `${run.kind} · bench ${run.bench_id || '—'} · created ${run.created_at} · ${run.started_at ? `started ${run.started_at}` : 'not started'}${run.finished_at ? ` · finished ${run.finished_at}` : ''}${run.status_reason ? ` · ${run.status_reason}` : ''}`),
    stopNote(run),
    run.campaign ? h('p', { id: 'run-campaign' }, `Step ${run.campaign.step} of `, h('a', { href: `#/characterise/${run.campaign.id}` }, `campaign ${run.campaign.id}`)) : null,
    chain.length > 1
      ? h(
          'p',
          { id: 'run-chain' },
          'Chain (analysed as one run): ',
          ...chain.flatMap((id, i) => [
            i ? ' → ' : '',
            id === run.id ? h('strong', null, `#${id}`) : h('a', { href: `#/runs/${id}` }, `#${id}`),
          ]),
        )
      : null,
    h(
      'div',
      { class: 'row' },
      h('a', { class: 'button', id: 'export-csv', href: withToken(`/api/runs/${run.id}/export?format=csv`), download: `run-${run.id}.csv` }, 'Export CSV'),
      h('a', { class: 'button', id: 'export-parquet', href: withToken(`/api/runs/${run.id}/export?format=parquet`), download: `run-${run.id}.parquet` }, 'Export Parquet'),
      resumable ? h('button', { type: 'button', id: 'run-resume', onclick: resume }, 'Resume from the last completed segment') : null,
      live_ ? h('button', { type: 'button', onclick: () => act('stop') }, 'Stop after this segment') : null,
      live_ ? h('button', { type: 'button', onclick: () => act('abort') }, run.status === 'queued' ? 'Remove from the queue' : 'Abort now') : null,
      msg,
    ),
  );
}

async function renderBody(body: HTMLElement, run: any, charts: { destroy(): void }[]) {
  const ts = h('section', { class: 'card', 'aria-labelledby': 'ts-h', id: 'run-timeseries' }, h('h2', { id: 'ts-h' }, 'Time series'));
  const res = h('section', { class: 'card', 'aria-labelledby': 'res-h', id: 'run-results' }, h('h2', { id: 'res-h' }, 'Results'));
  const cmp = h('section', { class: 'card', 'aria-labelledby': 'cmp-h', id: 'run-comparisons' }, h('h2', { id: 'cmp-h' }, 'Model comparison'));
  const log = h('section', { class: 'card', 'aria-labelledby': 'log-h', id: 'run-interruptions' }, h('h2', { id: 'log-h' }, 'Interruption log'));
  const checks = h('section', { class: 'card', 'aria-labelledby': 'checks-h', id: 'run-log' }, h('h2', { id: 'checks-h' }, 'Run log'));
  const prov = h('section', { class: 'card', 'aria-labelledby': 'prov-h', id: 'run-provenance' }, h('h2', { id: 'prov-h' }, 'Provenance'));
  // The tags-and-notes card outlives a redraw (the run completing under an operator who is
  // typing a note): only what they save changes it.
  const annotations = body.querySelector<HTMLElement>('#run-annotations') ?? annotateCard(run);
  body.replaceChildren(res, ts, cmp, log, checks, prov, annotations);

  const imported = run.kind === 'imported';
  if (imported) res.querySelector('h2')!.textContent = 'Recording';
  // Results plots.
  let results = imported ? null : run.results;
  if (!imported && !results && run.status === 'completed') results = await get(`/api/runs/${run.id}/results`).catch(() => null);
  if (results) {
    const sets = await get(`/api/parameter-sets`).catch(() => []);
    await resultPlots(res, run, results, Array.isArray(sets) ? sets : []);
  } else if (!imported) res.append(h('p', { class: 'muted' }, run.status === 'completed' ? 'No analysis stored.' : 'The analysis appears when the run completes.'));

  // Time series, decimated to about 20 000 points per series.
  if (run.sample_count > 0) {
    const every = Math.max(1, Math.ceil(run.sample_count / 20000));
    try {
      const s = await get<SampleColumns>(`/api/runs/${run.id}/samples${qs({ every, format: 'json' })}`);
      // Units of the bench the run was recorded on (bench.toml `geometry`, rotary by default).
      const linear = run.bench_config?.geometry === 'linear';
      const [force, pos] = linear ? ['N', 'm'] : ['N m', 'rad'];
      const all: string[] = s.models ?? Object.keys(s.outputs ?? {});
      const split = splitModels(all);
      const models = split.friction.map((i) => all[i]);
      const plants = split.position.map((i) => all[i]);
      const outs = models.map((m) => s.outputs?.[m] ?? []);
      const mk = (title: string, unit: string, labels: string[], data: any[][], measured?: number | Scale, hidden?: boolean[]) => {
        const el = h('div', { class: 'chart' });
        ts.append(el);
        const c = timeChart(el, title, unit, labels, 620, 220, measured, hidden);
        c.set([s.t, ...data]);
        charts.push(c);
      };
      ts.append(h('p', { class: 'muted' }, `${s.t.length} points per series (${every === 1 ? 'every sample' : `one sample in ${every}`}).`));
      const grid = h('div', { class: 'charts' });
      ts.append(grid);
      if (imported) {
        recordingCard(res, run, s);
        recordingCharts(grid, run, s, charts);
        return finishBody(cmp, log, checks, prov, run);
      }
      // Models on their defaults (nothing fitted) and the simulated plants start hidden.
      const sources = runSources(run);
      const hide = models.map((m) => onDefaults(sources, m));
      grid.before(chartNotes('run-chart-notes', models.filter((_, i) => hide[i]), plants.length));
      if (models.length) ts.before(residualTable(rankResiduals(models, outs, s.torque_sensor), s.torque_sensor, sources, force, s.t.length));
      mk('Position', `x [${pos}]`, ['x', ...plants.map((m) => `${m.replace(':x_plant', '')} (simulated plant)`)], [s.x, ...plants.map((m) => s.outputs?.[m] ?? [])], undefined, [false, ...plants.map(() => true)]);
      mk('Velocity', `v [${pos}/s]`, ['v'], [s.v]);
      // The measured signals set the scale; model outputs beyond them are clipped and marked.
      mk('Torque and model outputs', `[${force}]`, ['torque_motor', 'torque_sensor', ...models], [s.torque_motor, s.torque_sensor, ...outs], 2, [false, false, ...hide]);
      // The drive command on its own axis: its unit follows each segment's drive mode.
      mk(`Drive command (${force}, ${pos}/s or ${pos} by drive mode)`, 'u_cmd', ['u_cmd'], [s.u_cmd]);
      if (models.length) mk('Residual (sensor − model)', `[${force}]`, models.map((m) => `sensor − ${m}`), outs.map((o: any[]) => o.map((y, i) => (y == null || s.torque_sensor[i] == null ? null : s.torque_sensor[i] - y))), symmetricScale(() => s.torque_sensor), hide);
      for (const el of Array.from(ts.querySelectorAll('.chart'))) grid.append(el);
    } catch (e) {
      ts.append(h('p', { class: 'bad' }, `samples: ${(e as Error).message}`));
    }
  } else ts.append(h('p', { class: 'muted' }, 'No samples recorded (yet).'));
  finishBody(cmp, log, checks, prov, run);
}

/** The comparisons, the interruption log, the run log and the provenance of a run page. */
function finishBody(cmp: HTMLElement, log: HTMLElement, checks: HTMLElement, prov: HTMLElement, run: any) {
  // Comparisons.
  const comps: any[] = run.comparisons ?? [];
  if (!comps.length) cmp.append(h('p', { class: 'muted' }, 'No model comparison uses this run. Start one on the Models & fits page.'));
  for (const c of comps) cmp.append(comparisonTable(c));

  // Interruption log.
  const entries: any[] = run.interruption_log ?? [];
  log.append(entries.length ? dataTable(entries, ['at', 't', 'reason']) : h('p', { class: 'muted' }, 'Nothing interrupted this run.'));

  // Run log: what was checked and read back (the drive's watchdog, the profile), not faults.
  const notes: any[] = run.run_log ?? [];
  checks.append(
    h('p', { class: 'muted' }, 'What the daemon checked and read back before and during the run.'),
    notes.length ? dataTable(notes, ['at', 't', 'reason']) : h('p', { class: 'muted' }, 'Nothing logged.'),
  );

  // Provenance.
  const tm = run.timing ?? {};
  prov.append(
    kvTable([
      ['software', run.software_version ?? '—'],
      ['control period', run.period_s != null ? `${fmt(run.period_s)} s` : '—'],
      ['period error p50 / p99 / max', `${fmt(tm.period_error_p50_us)} / ${fmt(tm.period_error_p99_us)} / ${fmt(tm.period_error_max_us)} µs`],
      ['period error p99.9', tm.period_error_p999_us != null ? `${fmt(tm.period_error_p999_us)} µs` : '—'],
      ['tick work p50', tm.tick_work_p50_us != null ? `${fmt(tm.tick_work_p50_us)} µs` : '—'],
      ['overruns', fmt(tm.overruns)],
      ['samples', fmt(run.sample_count)],
      ['dropped batches (samples)', `${fmt(run.dropped_batches)} (${fmt(run.dropped_samples)})`],
      ['lockstep models', (run.models ?? []).join(', ') || '—'],
      // Where each lockstep model's parameters came from (a parameter set, a table, defaults).
      ['lockstep parameters', ((run.bench_config?.lockstep_sets ?? []) as any[]).map((u) => `${u.model}: ${u.set_id != null ? `set #${u.set_id} “${u.set_name}” (${u.source})` : u.source}`).join('; ') || '—'],
      ['tags', (run.tags ?? []).join(' ') || '—'],
      ['notes', run.notes ?? '—'],
    ]),
    h('details', null, h('summary', null, 'Spec'), h('pre', null, JSON.stringify(run.spec, null, 2))),
    h('details', null, h('summary', null, 'Bench configuration'), h('pre', null, JSON.stringify(run.bench_config, null, 2))),
    h('details', null, h('summary', null, 'Device profiles'), h('pre', null, JSON.stringify(run.device_profiles, null, 2))),
  );
}

export function comparisonTable(c: any): HTMLElement {
  const table = c.table ?? c;
  const rows: any[] = Array.isArray(table?.rows) ? table.rows : Array.isArray(table) ? table : [];
  const residual: string = table?.residual ?? 'residual';
  const runs = (ids: any, data: any) =>
    Array.isArray(ids) && ids.length ? `runs ${ids.map((i: any) => `#${i}`).join(', ')}` : Array.isArray(data) ? `${data.length} data set(s)` : '—';
  const mse = (s: any, k: string) => fmt(s?.[k]);
  const fitted = (r: any) => {
    const p = r.params && typeof r.params === 'object' ? r.params : {};
    const names = Object.keys(p).filter((k) => typeof p[k] === 'number');
    return names.length ? names.map((k) => `${k} = ${fmt(p[k])}`).join(', ') : '—';
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

/** A compensation trial: compensators ranked by RMS tracking error, their improvement over the
 * baseline as bars, and every compensator's error around one reversal on one axis. */
function compensationTrial(box: HTMLElement, r: any) {
  const ranking: any[] = r.ranking ?? [];
  const mrad = (x: any) => (typeof x === 'number' && Number.isFinite(x) ? fmt(x * 1e3) : '—');
  box.append(
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data trial-table' },
        h('caption', null, `Compensators ranked by RMS tracking error (baseline: ${r.baseline ?? 'none'}); errors in mrad, effort in N m`),
        h('thead', null, h('tr', null, ['rank', 'compensator', 'law', 'RMS error', 'max error', 'reversal glitch', 'effort RMS', 'improvement %', 'unstable', 'trials'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          null,
          ranking.map((c) =>
            h(
              'tr',
              { 'data-compensator': c.name },
              h('td', null, String(c.rank)),
              h('th', { scope: 'row' }, c.name),
              h('td', null, c.law),
              h('td', null, mrad(c.rms_error)),
              h('td', null, mrad(c.max_error)),
              h('td', null, mrad(c.reversal_glitch)),
              h('td', null, fmt(c.effort_rms)),
              h('td', null, c.improvement_pct == null ? '—' : fmt(c.improvement_pct, 3)),
              h('td', null, c.unstable ? h('span', { class: 'bad' }, 'unstable') : 'no'),
              h('td', null, String(c.trials)),
            ),
          ),
        ),
      ),
    ),
  );
  const pct = ranking.map((c) => (typeof c.improvement_pct === 'number' ? c.improvement_pct : 0));
  const span = Math.max(1e-9, ...pct.map((x) => Math.abs(x)));
  box.append(
    h(
      'figure',
      { class: 'bars', 'aria-label': 'Improvement of the RMS tracking error over the baseline per compensator', 'data-testid': 'improvement-bars' },
      h('figcaption', null, 'Improvement of the RMS tracking error over the baseline, % (longer is better; red: worse than the baseline)'),
      ranking.map((c, i) =>
        h(
          'div',
          { class: 'bar-row' },
          h('span', { class: 'bar-label' }, c.name),
          h('span', { class: pct[i] < 0 || c.unstable ? 'bar bad-bar' : 'bar', style: `width: ${Math.max(0.5, (100 * Math.abs(pct[i])) / span)}%` }),
          h('span', { class: 'bar-value' }, c.unstable ? 'unstable' : `${fmt(pct[i], 3)} %`),
        ),
      ),
    ),
  );
  const traces: any[] = r.reversal_traces ?? [];
  if (traces.length)
    box.append(
      xyPlot({
        title: `Tracking error around the first reversal of ${r.trace_reference ?? 'the first reference'}`,
        xLabel: 'time from the reversal [s]',
        yLabel: 'tracking error [mrad]',
        series: traces.map((t) => ({ label: t.name, x: t.t_s, y: t.error_rad.map((e: number) => e * 1e3), mode: 'line' as const })),
        testId: 'reversal-plot',
      }),
    );
  box.append(h('details', null, h('summary', null, 'Per reference'), dataTable(ranking.flatMap((c) => (c.per_reference ?? []).map((p: any) => ({ compensator: c.name, ...p }))))));
}

/** A fit's verdict: `ok`, or `warning` with its reasons. */
function verdict(v: any): HTMLElement | string {
  if (!v) return '—';
  if (v.status === 'ok') return 'ok';
  return h('span', { class: 'bad', title: (v.reasons ?? []).join('\n') }, `${v.status}: ${(v.reasons ?? []).join('; ')}`);
}

/** Validation MSE per model as horizontal bars (shortest is best), labelled with the value. */
function mseBars(rows: any[], residual: string): HTMLElement {
  const val = (r: any) => (typeof r.validation?.all === 'number' && Number.isFinite(r.validation.all) ? r.validation.all : null);
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

function fitsOfRun(sets: any[], runId: number, procedure: string): any[] {
  return sets.filter((s) => {
    const p = s.provenance ?? {};
    const runs: any[] = p.runs ?? [];
    return runs.map(Number).includes(runId) && (p.procedure ?? p.method) === procedure;
  });
}

async function resultPlots(box: HTMLElement, run: any, r: any, sets: any[]) {
  const kind = r.kind ?? run.kind;
  const add = (el: HTMLElement) => box.append(el);
  if (kind === 'constant_velocity_sweep') {
    const pts = [...(r.positive ?? []), ...(r.negative ?? [])];
    // Points flagged stick_slip (the velocity loop did not hold the set point) are left out of
    // every fit: drawn as rings with their own legend entry.
    const dir = (name: string, ps: any[], color: string, slip: boolean): XYSeries => {
      const sel = ps.filter((p: any) => !!p.stick_slip === slip);
      return {
        label: slip ? `${name} direction, stick-slip: left out of fits` : `${name} direction (mean ± std)`,
        x: sel.map((p: any) => p.velocity_rad_s),
        y: sel.map((p: any) => p.mean_torque_nm),
        err: sel.map((p: any) => p.std_torque_nm),
        mode: 'points',
        color,
        hollow: slip,
      };
    };
    const series: XYSeries[] = [
      dir('positive', r.positive ?? [], PALETTE[0], false),
      dir('negative', r.negative ?? [], PALETTE[1], false),
    ];
    for (const [name, ps, color] of [['positive', r.positive ?? [], PALETTE[0]], ['negative', r.negative ?? [], PALETTE[1]]] as const)
      if (ps.some((p: any) => p.stick_slip)) series.push(dir(name, ps, color, true));
    const vmax = Math.max(1e-9, ...pts.map((p: any) => Math.abs(p.velocity_rad_s)));
    const fitted = await fittedCurves(fitsOfRun(sets, run.id, 'static_curve'), vmax);
    series.push(...fitted.series);
    const plot = xyPlot({ title: 'Friction vs velocity (Stribeck points)', xLabel: 'velocity [rad/s]', yLabel: 'friction torque [N m]', series, testId: 'stribeck-plot' });
    // The first fitted curve's last point, for a check against the service's value.
    if (fitted.end) plot.dataset.fittedEnd = fitted.end.join(',');
    add(plot);
    add(h('details', null, h('summary', null, `Stribeck points (${pts.length})`), dataTable(pts)));
  } else if (kind === 'presliding') {
    const series: XYSeries[] = (r.ramps ?? []).map((rp: any) => ({ label: `ramp ${rp.direction > 0 ? '+' : '−'}`, x: rp.curve.x, y: rp.curve.y, mode: 'line' as const }));
    if (series.length) add(xyPlot({ title: 'Friction vs displacement: breakaway ramps', xLabel: 'displacement from the start [rad]', yLabel: 'torque [N m]', series, testId: 'presliding-plot' }));
    if (r.reversals)
      add(
        xyPlot({
          title: 'Friction vs displacement: presliding hysteresis loops (reversals)',
          xLabel: 'displacement from the start [rad]',
          yLabel: 'torque [N m]',
          series: [
            { label: 'loops', x: r.reversals.curve.x, y: r.reversals.curve.y, mode: 'line' },
            { label: 'reversal points', x: r.reversals.reversal_points.x, y: r.reversals.reversal_points.y, mode: 'points' },
          ],
          testId: 'reversals-plot',
        }),
      );
    add(dataTable((r.ramps ?? []).map((x: any) => ({ direction: x.direction, breakaway_torque_nm: x.breakaway_torque_nm, breakaway_displacement_rad: x.breakaway_displacement_rad, initial_stiffness_nm_rad: x.initial_stiffness_nm_rad }))));
    if (r.sine) add(kvTable(Object.entries(r.sine).map(([k, v]) => [k, fmt(v)]), 'Sine'));
    if (r.step) add(kvTable(Object.entries(r.step).map(([k, v]) => [k, fmt(v)]), 'Step'));
  } else if (kind === 'frictional_lag') {
    const loops: any[] = r.loops ?? [];
    add(xyPlot({ title: 'Friction vs velocity loops (frictional lag)', xLabel: 'velocity [rad/s]', yLabel: 'torque [N m]', series: loops.map((l) => ({ label: `${l.chirp ? 'chirp to ' : ''}ω = ${fmt(l.omega_rad_s)} rad/s, dir ${l.direction > 0 ? '+' : '−'}`, x: l.loop_v_torque.x, y: l.loop_v_torque.y, mode: 'line' as const })), testId: 'lag-plot' }));
    add(dataTable(loops.map((l) => ({ omega_rad_s: l.omega_rad_s, chirp: l.chirp, direction: l.direction, hysteresis_nm: l.hysteresis_nm, n: l.n }))));
  } else if (kind === 'torque_ramp' || kind === 'dwell_time') {
    const xk = kind === 'torque_ramp' ? 'rate_nm_s' : 'dwell_s';
    const series: XYSeries[] = ['positive', 'negative'].map((d) => ({ label: `${d} (mean ± std)`, x: (r[d] ?? []).map((p: any) => p[xk]), y: (r[d] ?? []).map((p: any) => p.breakaway_torque_nm), err: (r[d] ?? []).map((p: any) => p.std_torque_nm), mode: 'points' as const }));
    add(xyPlot({ title: kind === 'torque_ramp' ? 'Breakaway torque vs torque rate' : 'Breakaway torque vs dwell time', xLabel: kind === 'torque_ramp' ? 'torque rate [N m/s]' : 'dwell time [s]', yLabel: 'breakaway torque [N m]', series, testId: 'breakaway-plot' }));
    add(dataTable([...(r.positive ?? []), ...(r.negative ?? [])]));
  } else if (kind === 'breakaway_staircase') {
    add(kvTable([['F_s', `${fmt(r.fs_nm)} N m`], ['positive', r.positive ? `${fmt(r.positive.fs_nm)} ± ${fmt(r.positive.std_nm)} N m (n=${r.positive.n})` : '—'], ['negative', r.negative ? `${fmt(r.negative.fs_nm)} ± ${fmt(r.negative.std_nm)} N m (n=${r.negative.n})` : '—']]));
  } else if (kind === 'prbs') {
    add(kvTable([['v rms', `${fmt(r.v_rms_rad_s)} rad/s`], ['v max', `${fmt(r.v_max_rad_s)} rad/s`], ['RLS Fv', r.rls ? `${fmt(r.rls.fv_nm_s_rad)} N m s/rad` : '—'], ['RLS Fc', r.rls ? `${fmt(r.rls.fc_nm)} N m` : '—']]));
  } else if (kind === 'validation_profile') {
    add(kvTable([['rms error', fmt(r.rms_error)]]));
    add(dataTable(r.pieces ?? []));
  } else if (kind === 'compensation_trial') {
    compensationTrial(box, r);
  } else {
    add(h('pre', null, JSON.stringify(r, null, 2)));
  }
  add(h('p', { class: 'muted' }, `Analysis of run #${run.id}. `, h('a', { href: `/api/runs/${run.id}/results`, target: '_blank' }, 'results JSON')));
}
