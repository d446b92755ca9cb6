// Bench: connection and drive state, limits, live values, e-stop, live charts.
import { get, post, setToken, token, ApiError, type Schemas } from '../api';
import { h, clear, fmt, kvTable, notice } from '../dom';
import { live, CAPACITY, SIGNALS, splitModels } from '../live';
import { timeChart, TSChart, symmetricScale, Scale } from '../timeseries';
import { chartNotes, onDefaults, runSources, sourcesFromSets, Source } from '../lockstep';
import type { RunRecord } from '../runrecord';

export function benchPage(root: HTMLElement): () => void {
  const state = h('section', { class: 'card', id: 'bench-state', 'aria-labelledby': 'bench-state-h' });
  const values = h('section', { class: 'card', 'aria-labelledby': 'bench-values-h' });
  const limits = h('section', { class: 'card', 'aria-labelledby': 'bench-limits-h' });
  const msg = notice();
  const estop = h('button', { class: 'estop big', type: 'button', id: 'estop-big' }, 'EMERGENCY STOP');
  const reset = h('button', { type: 'button', id: 'estop-reset' }, 'Reset e-stop');
  // A latched drive fault is cleared only here (or `bench fault-reset`), never by a run.
  const faultReset = h('button', { type: 'button', id: 'fault-reset' }, 'Reset drive fault');
  const stopRun = h('button', { type: 'button' }, 'Stop run after this segment');
  const abortRun = h('button', { type: 'button' }, 'Abort run now');
  const tokenInput = h('input', { id: 'token', type: 'password', value: token(), autocomplete: 'off' });
  const charts = h('div', { class: 'charts', id: 'live-charts', 'data-points': '0', 'data-total': '0' });
  const chartNote = h('p', { class: 'muted' });
  const modelNotes = h('div');

  root.append(
    h('h1', null, 'Bench'),
    h(
      'div',
      { class: 'estop-row' },
      estop,
      reset,
      faultReset,
      stopRun,
      abortRun,
      msg,
    ),
    h('div', { class: 'grid3' }, state, values, limits),
    h('h2', null, 'Live'),
    chartNote,
    modelNotes,
    charts,
    h(
      'details',
      { class: 'card' },
      h('summary', null, 'Access token (for a daemon started with a token)'),
      h('label', { for: 'token' }, 'Bearer token '),
      tokenInput,
      h('button', { type: 'button', onclick: () => { setToken(tokenInput.value.trim()); msg.show('token saved in this browser'); } }, 'Save'),
    ),
  );

  let bench: Schemas['BenchStatus'] | null = null;
  /** The newest sample in the live ring (for a status that carries none). */
  const latest = (): Schemas['Sample'] => {
    const r = live.ring;
    if (!r.len) return {};
    const i = (r.head + r.t.length - 1) % r.t.length;
    const s: Schemas['Sample'] = { t: r.t[i] };
    for (const k of SIGNALS) s[k] = r.sig[k][i];
    return s;
  };
  const act = async (label: string, path: () => string | null) => {
    const p = path();
    if (!p) return msg.show('no run is running', 'error');
    try {
      await post(p);
      msg.show(`${label}: done`);
      refresh();
    } catch (e) {
      msg.show(`${label}: ${(e as ApiError).message}`, 'error');
    }
  };
  estop.addEventListener('click', async () => {
    try {
      const r = await post<Schemas['Stopped']>('/api/estop');
      const s: Schemas['SafeState'] = r.safe_state ?? {};
      msg.show(
        s.confirmed ? `e-stop latched: ${s.detail}` : `e-stop latched, but the drive is NOT confirmed disabled: ${s.detail}`,
        s.confirmed ? undefined : 'error',
      );
    } catch (e) {
      msg.show(`e-stop: ${(e as ApiError).message}`, 'error');
    }
    refresh();
  });
  faultReset.addEventListener('click', async () => {
    if (!window.confirm('Reset the drive fault? Check the bench first: the cause of the fault must be gone.')) return;
    try {
      const r = await post<Schemas['FaultReset']>('/api/faults/reset');
      if (!r.was_faulted) msg.show('no drive fault was latched');
      else if (r.cleared) msg.show('drive fault cleared (the drive stays disabled)');
      else msg.show('the drive still reads a fault', 'error');
    } catch (e) {
      msg.show(`drive fault reset: ${(e as ApiError).message}`, 'error');
    }
    refresh();
  });
  reset.addEventListener('click', () => act('e-stop reset', () => '/api/estop/reset'));
  stopRun.addEventListener('click', () => act('stop', () => (bench?.run_id != null ? `/api/runs/${bench.run_id}/stop` : null)));
  abortRun.addEventListener('click', () => act('abort', () => (bench?.run_id != null ? `/api/runs/${bench.run_id}/abort` : null)));

  // Where the streamed models' parameters came from: the running run's record; before any run,
  // guessed from the stored sets (the daemon runs a model on its newest set, else defaults).
  let sources = new Map<string, Source>();
  let sourcesOf: number | null | undefined;
  const learnSources = async (b: Schemas['BenchStatus']) => {
    const run = b.run_id ?? null;
    if (run === sourcesOf || (run === null && sourcesOf !== undefined)) return;
    sourcesOf = run;
    try {
      sources = run !== null ? runSources(await get<RunRecord>(`/api/runs/${run}`)) : sourcesFromSets(b.models ?? [], await get('/api/parameter-sets'));
      dirty = true;
    } catch {
      sourcesOf = undefined;
    }
  };
  const show = (b: Schemas['BenchStatus']) => {
    bench = b;
    learnSources(b);
    const lv: Partial<Schemas['Live']> = b.live ?? {};
    clear(
      state,
      h('h2', { id: 'bench-state-h' }, 'State'),
      kvTable([
        ['source', b.source ?? '—'],
        ['drive connected', b.connected ? 'yes' : 'NO'],
        ['busy', b.busy ? 'yes' : 'no'],
        ['run', b.run_id != null ? h('a', { href: `#/runs/${b.run_id}` }, `#${b.run_id}`) : '—'],
        ['e-stop', b.estop ? h('strong', { class: 'bad' }, 'LATCHED') : 'clear'],
        ['phase', lv.phase ?? '—'],
        ['segment', lv.segments ? `${(lv.segment ?? 0) + 1} / ${lv.segments} ${lv.label ?? ''}` : '—'],
        ['run time', lv.t != null ? `${fmt(lv.t)} s` : '—'],
        ['samples', fmt(lv.samples)],
        ['overruns', fmt(lv.overruns)],
        ['dropped batches', fmt(lv.dropped_batches)],
        ['lockstep models', (b.models ?? []).join(', ') || '—'],
      ]),
    );
    // Values are live only while a run's loop is sampling; otherwise the last motion would
    // sit on the page as if the bench were still moving.
    const fresh = !!b.busy && lv.phase === 'running';
    const s = lv.sample && Object.keys(lv.sample).length ? lv.sample : latest();
    const v = (x: unknown, unit: string) => (fresh ? `${fmt(x)} ${unit}` : '—');
    clear(
      values,
      h('h2', { id: 'bench-values-h' }, 'Live values'),
      fresh ? null : h('p', { class: 'muted', id: 'bench-values-stale' }, 'No samples arriving: no run is moving the bench.'),
      kvTable([
        ['position x', v(s.x, commandUnit('position', b.units))],
        ['velocity v', v(s.v, commandUnit('velocity', b.units))],
        [`commanded ${lv.command || 'torque'} (u_cmd)`, v(s.u_cmd, commandUnit(lv.command || 'torque', b.units))],
        ['drive torque', v(s.torque_motor, commandUnit('torque', b.units))],
        ['sensor torque', v(s.torque_sensor, commandUnit('torque', b.units))],
        ['flags', fresh ? fmt(s.flags) : '—'],
      ]),
    );
    const l: Schemas['Limits'] = b.limits ?? {};
    clear(
      limits,
      h('h2', { id: 'bench-limits-h' }, 'Limits'),
      kvTable([
        ['torque', `${fmt(l.torque_nm)} N m`],
        ['velocity', `${fmt(l.velocity_rad_s)} rad/s`],
        ['position window', `± ${fmt(l.position_window_rad)} rad`],
        ['control period', `${fmt(l.period_s)} s`],
        ['encoder', `${fmt(l.encoder_counts_per_rev)} counts/rev`],
      ]),
    );
    reset.hidden = !b.estop;
  };
  const refresh = () =>
    get<Schemas['BenchStatus']>('/api/bench').then(show, (e) => {
      clear(state, h('h2', { id: 'bench-state-h' }, 'State'), h('p', { class: 'bad' }, `daemon unreachable: ${e.message}`));
    });
  refresh();

  // Live charts, redrawn at most 10 times a second from the shared ring buffer.
  let built: { models: string; hidden: string; charts: TSChart[] } | null = null;
  // The charts are rebuilt when the streamed models change; when only what runs on defaults
  // changes (the run's record arrived), their traces are hidden or shown in place.
  const hiddenKey = () => live.ring.models.map((m) => (onDefaults(sources, m) ? 'd' : 'f')).join('');
  const showModels = () => {
    const { friction } = splitModels(live.ring.models);
    const fm = friction.map((i) => live.ring.models[i]);
    const hide = fm.map((m) => onDefaults(sources, m));
    modelNotes.replaceChildren(chartNotes('live-chart-notes', fm.filter((_, i) => hide[i]), splitModels(live.ring.models).position.length));
    if (!built) return;
    const [, , ct, cr] = built.charts;
    hide.forEach((off, i) => {
      ct.show(2 + i, !off);
      if (fm.length) cr.show(i, !off);
    });
    built.hidden = hiddenKey();
  };
  const build = () => {
    built?.charts.forEach((c) => c.destroy());
    charts.replaceChildren();
    const models = live.ring.models;
    const { friction, position } = splitModels(models);
    const fm = friction.map((i) => models[i]);
    const pm = position.map((i) => models[i]);
    const hide = fm.map((m) => onDefaults(sources, m));
    const w = Math.max(360, Math.min(760, ((root.clientWidth || 1200) - 40 - 12) / 2 - 14));
    const mk = (id: string, title: string, unit: string, labels: string[], measured?: number | Scale, hidden?: boolean[]) => {
      const el = h('div', { class: 'chart', id });
      charts.append(el);
      return timeChart(el, title, unit, labels, w, 210, measured, hidden);
    };
    built = {
      models: models.join(','),
      hidden: '',
      charts: [
        mk('chart-x', 'Position', 'x [rad]', ['x', ...pm.map((m) => `${m.replace(':x_plant', '')} (simulated plant)`)], undefined, [false, ...pm.map(() => true)]),
        mk('chart-v', 'Velocity', 'v [rad/s]', ['v']),
        // The measured signals set the scale; model outputs beyond them are clipped and marked.
        mk('chart-torque', 'Torque and predicted friction', '[N m]', ['torque_motor', 'torque_sensor', ...fm.map((m) => `${m} (predicted)`)], 2, [false, false, ...hide]),
        mk('chart-residual', 'Residual (sensor − model)', '[N m]', fm.length ? fm.map((m) => `sensor − ${m}`) : ['(each lockstep model\'s residual, while a run streams samples)'], symmetricScale(() => live.ring.ordered(live.ring.sig['torque_sensor'])), hide),
        // The drive command on its own axis: torque, velocity or position by the drive mode.
        mk('chart-command', `Drive command (${COMMAND_AXIS})`, 'u_cmd', ['u_cmd']),
      ],
    };
  };
  const draw = () => {
    const r = live.ring;
    if (!built || built.models !== r.models.join(',')) build();
    if (built!.hidden !== hiddenKey()) showModels();
    const t = r.ordered(r.t);
    const sig = (k: string) => r.ordered(r.sig[k]);
    const sensor = sig('torque_sensor');
    const { friction, position } = splitModels(r.models);
    const outs = friction.map((i) => r.ordered(r.out[i]));
    const [cx, cv, ct, cr, cc] = built!.charts;
    cx.set([t, sig('x'), ...position.map((i) => r.ordered(r.out[i]))]);
    cv.set([t, sig('v')]);
    ct.set([t, sig('torque_motor'), sensor, ...outs]);
    cc.set([t, sig('u_cmd')]);
    cr.set([t, ...(outs.length ? outs.map((o) => o.map((y, i) => (y === null || sensor[i] === null ? null : (sensor[i] as number) - y))) : [t.map(() => null)])]);
    charts.dataset.points = String(r.len);
    charts.dataset.total = String(r.total);
    chartNote.textContent = `${r.len} points per series on screen (latest ${CAPACITY} kept), ${r.total} received since the run's start.`;
  };
  let dirty = true;
  let lastDraw = 0;
  let drawMs = 0;
  const off = live.on((ev, d) => {
    if (ev === 'sample') dirty = true;
    if (ev === 'status') show({ ...bench, ...d });
    if (ev === 'run') refresh();
  });
  // At most 10 redraws a second, fewer when a redraw is slow (many models × 20 000 points).
  const tick = window.setInterval(() => {
    const now = performance.now();
    if (dirty && now - lastDraw >= Math.max(100, 4 * drawMs)) {
      dirty = false;
      lastDraw = now;
      draw();
      drawMs = performance.now() - now;
      charts.dataset.drawMs = drawMs.toFixed(1);
    }
  }, 50);
  const poll = window.setInterval(() => { if (!live.connected) refresh(); }, 2000);
  return () => {
    off();
    clearInterval(tick);
    clearInterval(poll);
    built?.charts.forEach((c) => c.destroy());
  };
}

/** The unit of `u_cmd` by the drive mode in force, in the bench's units. */
function commandUnit(mode: string, units?: { force?: string; position?: string }): string {
  const position = units?.position ?? 'rad';
  if (mode === 'velocity') return `${position}/s`;
  if (mode === 'position') return position;
  return units?.force ?? 'N m';
}

/** The unit of `u_cmd`, named in its chart's title (too long for the axis): it follows each
 * segment's drive mode. */
export const COMMAND_AXIS = 'N m, rad/s or rad by drive mode';
