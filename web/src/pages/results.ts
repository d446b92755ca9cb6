// A run's analysis on its page (`results`, by kind): the plots and tables of each kind.
import { h, fmt, kvTable, dataTable } from '../dom';
import { xyPlot, XYSeries, PALETTE } from '../xyplot';
import { fittedCurves, type FitSet } from './curves';
import type { Results, RunRecord, SetOfRun, StribeckPoint, TrialResults } from '../runrecord';

/** A stored parameter set as the run page reads it. */
export type RunSet = FitSet & SetOfRun;

function fitsOfRun(sets: RunSet[], runId: number, procedure: string): RunSet[] {
  return sets.filter((s) => {
    const p = s.provenance ?? {};
    const runs = p.runs ?? [];
    return runs.map(Number).includes(runId) && (p.procedure ?? p.method) === procedure;
  });
}

/** The plots and tables of `results`, the analysis of `run`, by its kind. */
export async function resultPlots(box: HTMLElement, run: RunRecord, results: Results, sets: RunSet[]) {
  const add = (el: HTMLElement) => box.append(el);
  if (results.kind === 'constant_velocity_sweep') {
    const r = results;
    const pts = [...(r.positive ?? []), ...(r.negative ?? [])];
    // Points flagged stick_slip (the velocity loop did not hold the set point) are left out of
    // every fit: drawn as rings with their own legend entry.
    const dir = (name: string, ps: StribeckPoint[], color: string, slip: boolean): XYSeries => {
      const sel = ps.filter((p) => !!p.stick_slip === slip);
      return {
        label: slip ? `${name} direction, stick-slip: left out of fits` : `${name} direction (mean ± std)`,
        x: sel.map((p) => p.velocity_rad_s),
        y: sel.map((p) => p.mean_torque_nm),
        err: sel.map((p) => p.std_torque_nm),
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
      if (ps.some((p) => p.stick_slip)) series.push(dir(name, ps, color, true));
    const vmax = Math.max(1e-9, ...pts.map((p) => Math.abs(p.velocity_rad_s)));
    const fitted = await fittedCurves(fitsOfRun(sets, run.id, 'static_curve'), vmax);
    series.push(...fitted.series);
    const plot = xyPlot({ title: 'Friction vs velocity (Stribeck points)', xLabel: 'velocity [rad/s]', yLabel: 'friction torque [N m]', series, testId: 'stribeck-plot' });
    // The first fitted curve's last point, for a check against the service's value.
    if (fitted.end) plot.dataset.fittedEnd = fitted.end.join(',');
    add(plot);
    add(h('details', null, h('summary', null, `Stribeck points (${pts.length})`), dataTable(pts)));
  } else if (results.kind === 'presliding') {
    const r = results;
    const series: XYSeries[] = (r.ramps ?? []).map((rp) => ({ label: `ramp ${rp.direction > 0 ? '+' : '−'}`, x: rp.curve.x, y: rp.curve.y, mode: 'line' as const }));
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
    add(dataTable((r.ramps ?? []).map((x) => ({ direction: x.direction, breakaway_torque_nm: x.breakaway_torque_nm, breakaway_displacement_rad: x.breakaway_displacement_rad, initial_stiffness_nm_rad: x.initial_stiffness_nm_rad }))));
    if (r.sine) add(kvTable(Object.entries(r.sine).map(([k, v]) => [k, fmt(v)]), 'Sine'));
    if (r.step) add(kvTable(Object.entries(r.step).map(([k, v]) => [k, fmt(v)]), 'Step'));
  } else if (results.kind === 'frictional_lag') {
    const r = results;
    const loops = r.loops ?? [];
    add(xyPlot({ title: 'Friction vs velocity loops (frictional lag)', xLabel: 'velocity [rad/s]', yLabel: 'torque [N m]', series: loops.map((l) => ({ label: `${l.chirp ? 'chirp to ' : ''}ω = ${fmt(l.omega_rad_s)} rad/s, dir ${l.direction > 0 ? '+' : '−'}`, x: l.loop_v_torque.x, y: l.loop_v_torque.y, mode: 'line' as const })), testId: 'lag-plot' }));
    add(dataTable(loops.map((l) => ({ omega_rad_s: l.omega_rad_s, chirp: l.chirp, direction: l.direction, hysteresis_nm: l.hysteresis_nm, n: l.n }))));
  } else if (results.kind === 'torque_ramp' || results.kind === 'dwell_time') {
    const r = results;
    const kind = r.kind;
    const at = (p: (typeof r.positive)[number]) => ('rate_nm_s' in p ? p.rate_nm_s : p.dwell_s);
    const series: XYSeries[] = (['positive', 'negative'] as const).map((d) => ({ label: `${d} (mean ± std)`, x: r[d].map(at), y: r[d].map((p) => p.breakaway_torque_nm), err: r[d].map((p) => p.std_torque_nm), mode: 'points' as const }));
    add(xyPlot({ title: kind === 'torque_ramp' ? 'Breakaway torque vs torque rate' : 'Breakaway torque vs dwell time', xLabel: kind === 'torque_ramp' ? 'torque rate [N m/s]' : 'dwell time [s]', yLabel: 'breakaway torque [N m]', series, testId: 'breakaway-plot' }));
    add(dataTable([...(r.positive ?? []), ...(r.negative ?? [])]));
  } else if (results.kind === 'breakaway_staircase') {
    const r = results;
    add(kvTable([['F_s', `${fmt(r.fs_nm)} N m`], ['positive', r.positive ? `${fmt(r.positive.fs_nm)} ± ${fmt(r.positive.std_nm)} N m (n=${r.positive.n})` : '—'], ['negative', r.negative ? `${fmt(r.negative.fs_nm)} ± ${fmt(r.negative.std_nm)} N m (n=${r.negative.n})` : '—']]));
  } else if (results.kind === 'prbs') {
    const r = results;
    add(kvTable([['v rms', `${fmt(r.v_rms_rad_s)} rad/s`], ['v max', `${fmt(r.v_max_rad_s)} rad/s`], ['RLS Fv', r.rls ? `${fmt(r.rls.fv_nm_s_rad)} N m s/rad` : '—'], ['RLS Fc', r.rls ? `${fmt(r.rls.fc_nm)} N m` : '—']]));
  } else if (results.kind === 'validation_profile') {
    const r = results;
    add(kvTable([['rms error', fmt(r.rms_error)]]));
    add(dataTable(r.pieces ?? []));
  } else if (results.kind === 'compensation_trial') {
    compensationTrial(box, results);
  } else {
    add(h('pre', null, JSON.stringify(results, null, 2)));
  }
  add(h('p', { class: 'muted' }, `Analysis of run #${run.id}. `, h('a', { href: `/api/runs/${run.id}/results`, target: '_blank' }, 'results JSON')));
}


/** A compensation trial: compensators ranked by RMS tracking error, their improvement over the
 * baseline as bars, and every compensator's error around one reversal on one axis. */
function compensationTrial(box: HTMLElement, r: TrialResults) {
  const ranking = r.ranking ?? [];
  const mrad = (x: number | null | undefined) => (typeof x === 'number' && Number.isFinite(x) ? fmt(x * 1e3) : '—');
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
  const traces = r.reversal_traces ?? [];
  if (traces.length)
    box.append(
      xyPlot({
        title: `Tracking error around the first reversal of ${r.trace_reference ?? 'the first reference'}`,
        xLabel: 'time from the reversal [s]',
        yLabel: 'tracking error [mrad]',
        series: traces.map((t) => ({ label: t.name, x: t.t_s, y: t.error_rad.map((e) => e * 1e3), mode: 'line' as const })),
        testId: 'reversal-plot',
      }),
    );
  box.append(h('details', null, h('summary', null, 'Per reference'), dataTable(ranking.flatMap((c) => (c.per_reference ?? []).map((p) => ({ compensator: c.name, ...p }))))));
}
