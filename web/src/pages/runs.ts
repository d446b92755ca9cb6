// Runs: a searchable list and a run page with its plots, tables, log, provenance and exports.
import { get, qs, post, RunSummary, ApiError, withToken } from '../api';
import type { ImportedRun, SampleColumns } from '../answers';
import type { LogEntry, Results, RunRecord, Timing } from '../runrecord';
import { h, clear, fmt, kvTable, dataTable, notice, field } from '../dom';
import { runsHead, syncRows } from './runrows';
import { live, splitModels } from '../live';
import { timeChart, symmetricScale, Scale } from '../timeseries';
import { importForm, recordingCard, recordingCharts } from './imported';
import { annotateCard } from './annotate';
import { chartNotes, onDefaults, runSources } from '../lockstep';
import { rankResiduals, residualTable } from '../residuals';
import { comparisonTable, stored } from './comparison';
import { resultPlots, type RunSet } from './results';


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
    let run: RunRecord;
    try {
      run = await get<RunRecord>(`/api/runs/${id}`);
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
function stopNote(run: RunRecord): HTMLElement | null {
  const code = run.reason_code ?? null;
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

function renderHead(head: HTMLElement, run: RunRecord) {
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
  const chain = run.chain ?? [run.id];
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

async function renderBody(body: HTMLElement, run: RunRecord, charts: { destroy(): void }[]) {
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
  let results: Results | null = run.results?.kind === 'imported' ? null : run.results;
  if (!imported && !results && run.status === 'completed') results = await get<Results>(`/api/runs/${run.id}/results`).catch(() => null);
  if (results) {
    const sets = await get<RunSet[]>(`/api/parameter-sets`).catch(() => []);
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
      const mk = (title: string, unit: string, labels: string[], data: (number | null)[][], measured?: number | Scale, hidden?: boolean[]) => {
        const el = h('div', { class: 'chart' });
        ts.append(el);
        const c = timeChart(el, title, unit, labels, 620, 220, measured, hidden);
        c.set([s.t, ...data]);
        charts.push(c);
      };
      ts.append(h('p', { class: 'muted' }, `${s.t.length} points per series (${every === 1 ? 'every sample' : `one sample in ${every}`}).`));
      const grid = h('div', { class: 'charts' });
      ts.append(grid);
      if (imported && run.spec.kind === 'imported') {
        const r = run.results;
        const rec: ImportedRun = { sample_count: run.sample_count, spec: run.spec, results: r?.kind === 'imported' ? r : null };
        recordingCard(res, rec, s);
        recordingCharts(grid, rec, s, charts);
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
      if (models.length) mk('Residual (sensor − model)', `[${force}]`, models.map((m) => `sensor − ${m}`), outs.map((o) => o.map((y, i) => (y == null || s.torque_sensor[i] == null ? null : s.torque_sensor[i] - y))), symmetricScale(() => s.torque_sensor), hide);
      for (const el of Array.from(ts.querySelectorAll('.chart'))) grid.append(el);
    } catch (e) {
      ts.append(h('p', { class: 'bad' }, `samples: ${(e as Error).message}`));
    }
  } else ts.append(h('p', { class: 'muted' }, 'No samples recorded (yet).'));
  finishBody(cmp, log, checks, prov, run);
}

/** The comparisons, the interruption log, the run log and the provenance of a run page. */
function finishBody(cmp: HTMLElement, log: HTMLElement, checks: HTMLElement, prov: HTMLElement, run: RunRecord) {
  // Comparisons.
  const comps = run.comparisons ?? [];
  if (!comps.length) cmp.append(h('p', { class: 'muted' }, 'No model comparison uses this run. Start one on the Models & fits page.'));
  for (const c of comps) cmp.append(comparisonTable(stored(c)));

  // Interruption log.
  const entries: LogEntry[] = run.interruption_log ?? [];
  log.append(entries.length ? dataTable(entries, ['at', 't', 'reason']) : h('p', { class: 'muted' }, 'Nothing interrupted this run.'));

  // Run log: what was checked and read back (the drive's watchdog, the profile), not faults.
  const notes: LogEntry[] = run.run_log ?? [];
  checks.append(
    h('p', { class: 'muted' }, 'What the daemon checked and read back before and during the run.'),
    notes.length ? dataTable(notes, ['at', 't', 'reason']) : h('p', { class: 'muted' }, 'Nothing logged.'),
  );

  // Provenance.
  const tm: Timing = run.timing;
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
      ['lockstep parameters', (run.bench_config?.lockstep_sets ?? []).map((u) => `${u.model}: ${u.set_id != null ? `set #${u.set_id} “${u.set_name}” (${u.source})` : u.source}`).join('; ') || '—'],
      ['tags', (run.tags ?? []).join(' ') || '—'],
      ['notes', run.notes ?? '—'],
    ]),
    h('details', null, h('summary', null, 'Spec'), h('pre', null, JSON.stringify(run.spec, null, 2))),
    h('details', null, h('summary', null, 'Bench configuration'), h('pre', null, JSON.stringify(run.bench_config, null, 2))),
    deviceProfiles(run.device_profiles),
  );
}

/** Each device's profile as the run recorded it: its TOML text, one block per device. */
function deviceProfiles(p: RunRecord['device_profiles']): HTMLElement {
  const devices = (['drive', 'sensor', 'daq'] as const).flatMap((d) => (p?.[d] != null ? [[d, p[d]] as const] : []));
  return h(
    'details',
    { class: 'device-profiles' },
    h('summary', null, 'Device profiles'),
    devices.length ? devices.map(([d, text]) => h('div', { 'data-device': d }, h('h3', null, d), h('pre', null, text))) : h('p', { class: 'muted' }, 'None recorded (an imported recording).'),
  );
}
