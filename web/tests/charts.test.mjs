// Charts a person can read: lockstep models on their defaults start hidden and are listed
// "defaults, not fitted", the legend says what clicking and dragging do, the run page ranks the
// models by residual RMS, axes are in engineering notation (never a column of "0") and the
// simulated plants' positions are shown only on demand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, noExternalRequests } from './harness.mjs';

const h = harness();

/** Per chart: its legend's series and whether each is shown, its y label and its tick labels. */
const chartState = (sel) =>
  h.page.$eval(sel, (el) => ({
    series: [...el.querySelectorAll('.u-legend .u-series')].slice(1).map((s) => ({ label: s.querySelector('.u-label')?.textContent, on: !s.classList.contains('u-off') })),
    label: el.dataset.yLabel,
    ticks: (el.dataset.yTicks ?? '').split('|'),
  }));

/** Tick labels a person can tell apart: at least two, all distinct, not all zero. */
function readable(ticks, where) {
  assert.ok(ticks.length >= 2, `${where}: ticks ${ticks}`);
  assert.equal(new Set(ticks).size, ticks.length, `${where}: two ticks print alike: ${ticks.join(' | ')}`);
  assert.ok(ticks.some((t) => Number(t.replace('−', '-')) !== 0), `${where}: every tick reads 0`);
}

test('live charts on a fresh store: every model on defaults hidden and listed; presliding position in µrad', async () => {
  const { page } = h;
  await h.go('bench');
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live: connected');
  const models = (await h.api('/api/bench')).json.models;
  assert.ok(models.length >= 2, `lockstep models: ${models}`);
  assert.deepEqual((await h.api('/api/parameter-sets')).json, [], 'nothing is fitted yet');
  // A presliding motion of ±100 µrad, fed to the page's live buffer as the stream would.
  await page.evaluate((models) => {
    const live = window.frictionbench.live;
    live.ring.clear(models);
    for (let k = 0; k < 2000; k++) {
      const t = k * 1e-3;
      const x = 1e-4 * Math.sin(t * 6);
      const f = 5e3 * x;
      live.onSample({ sample: { t, x, v: 6e-4 * Math.cos(t * 6), u_cmd: f, torque_motor: f, torque_sensor: f, segment: 0, flags: 0 }, outputs: models.map((m) => (m.endsWith(':x_plant') ? x * 1.1 : 1.2 * Math.sign(Math.cos(t * 600)))), models });
    }
  }, models);
  await page.waitForSelector('#live-chart-notes .defaults-note');
  await page.waitForFunction(() => Number(document.getElementById('live-charts')?.dataset.points) === 2000);
  const friction = models.filter((m) => !m.includes(':'));
  assert.equal(await page.getAttribute('#live-chart-notes .defaults-note', 'data-models'), friction.join(','));
  assert.match(await page.textContent('#live-chart-notes .defaults-note'), /^defaults, not fitted: /);
  assert.match(await page.textContent('#live-chart-notes .legend-hint'), /Click a legend entry to show or hide .*drag across a chart to zoom/);
  const torque = await chartState('#chart-torque');
  assert.deepEqual(torque.series.filter((s) => s.on).map((s) => s.label), ['torque_motor', 'torque_sensor'], 'only the measured torque is shown');
  assert.equal(torque.series.length, 2 + friction.length);
  const residual = await chartState('#chart-residual');
  assert.ok(residual.series.every((s) => !s.on), 'every residual is of a model on defaults: all hidden');
  // The position axis at presliding scale: µrad ticks, each its own.
  const x = await chartState('#chart-x');
  assert.equal(x.label, 'x [µrad]');
  readable(x.ticks, 'position');
  assert.deepEqual(x.series.filter((s) => s.on).map((s) => s.label), ['x'], 'the plant traces wait to be asked for');
  // Clicking a model's legend entry shows it (what the hint says).
  await page.click(`#chart-torque .u-legend .u-series:nth-child(${4}) .u-label`);
  assert.equal((await chartState('#chart-torque')).series[2].on, true);
  await h.shot('charts-live-defaults-hidden');
});

test('run page: the models on defaults hidden and listed, a residual RMS table ranks the models, engineering ticks', async () => {
  const { page } = h;
  // A presliding run of ±200 µrad reversals; coulomb_viscous given a parameter table (so not on
  // defaults), every other model on its defaults.
  const spec = {
    kind: 'presliding',
    name: 'e2e charts: reversals',
    params: { parts: ['reversals'], reversals_rad: [0.0002, -0.0002, 0.0001], reversals_rate_rad_s: 0.0002 },
    lockstep: { params: { coulomb_viscous: { fc: 0.3, fv: 0.05 } } },
  };
  const r = await h.post('/api/runs', spec);
  assert.equal(r.status, 201, r.text);
  const run = await h.completed(r.json.id);
  const used = run.bench_config.lockstep_sets;
  const defaults = used.filter((u) => u.source === 'defaults').map((u) => u.model);
  assert.ok(used.some((u) => u.model === 'coulomb_viscous' && u.source === 'table'), JSON.stringify(used));
  assert.ok(defaults.length >= 1, JSON.stringify(used));
  await h.go(`runs/${run.id}`);
  await page.waitForSelector('#residual-table');
  await page.waitForSelector('#run-chart-notes');
  // Listed and hidden: exactly the models the run records as on defaults.
  assert.deepEqual((await page.getAttribute('#run-chart-notes .defaults-note', 'data-models')).split(','), run.models.filter((m) => defaults.includes(m)));
  const torque = await chartState('#run-timeseries .chart:has-text("Torque and model outputs")');
  assert.deepEqual(torque.series.filter((s) => s.on).map((s) => s.label), ['torque_motor', 'torque_sensor', 'coulomb_viscous']);
  // The clipping note speaks of the traces shown; the hidden ones it names apart, until shown.
  const torqueChart = '#run-timeseries .chart:has-text("Torque and model outputs")';
  const note = () => page.textContent(`${torqueChart} .clip-note`);
  const [shownPart, hiddenPart] = (await note()).split('; hidden, clipped too: ');
  for (const m of defaults) assert.ok(!shownPart.includes(`${m} (`), `${m} is hidden but named as shown: ${shownPart}`);
  assert.match(hiddenPart ?? '', new RegExp(`${defaults[0]} \\(\\d+\\)`), await note());
  const k = torque.series.findIndex((x) => x.label === defaults[0]);
  await page.click(`${torqueChart} .u-legend .u-series:nth-child(${k + 2}) .u-label`);
  assert.equal((await chartState(torqueChart)).series[k].on, true);
  assert.match((await note()).split('; hidden')[0], new RegExp(`${defaults[0]} \\(\\d+\\)`), 'shown now, named with the shown');
  // The residual RMS of every model, as computed here from the same samples, ranked.
  const every = Math.max(1, Math.ceil(run.sample_count / 20000));
  const s = (await h.api(`/api/runs/${run.id}/samples?every=${every}&format=json`)).json;
  const rms = (out) => {
    let sum = 0, n = 0;
    s.torque_sensor.forEach((y, i) => { if (y != null && out[i] != null) { sum += (y - out[i]) ** 2; n++; } });
    return Math.sqrt(sum / n);
  };
  const rows = await page.$$eval('#residual-table tbody tr', (trs) => trs.map((tr) => ({ model: tr.dataset.model, rms: Number(tr.dataset.rms), params: tr.children[2].textContent, rank: tr.children[0].textContent })));
  const friction = run.models.filter((m) => !m.includes(':'));
  assert.deepEqual(rows.map((x) => x.model).sort(), [...friction].sort());
  for (const row of rows) assert.ok(Math.abs(row.rms - rms(s.outputs[row.model])) <= 1e-12 * Math.max(1, row.rms), `${row.model}: ${row.rms} vs ${rms(s.outputs[row.model])}`);
  assert.deepEqual(rows.map((x) => x.rms), [...rows.map((x) => x.rms)].sort((a, b) => a - b), 'ranked, smallest first');
  assert.deepEqual(rows.map((x) => x.rank), rows.map((_, i) => String(i + 1)));
  for (const row of rows) assert.equal(row.params, row.model === 'coulomb_viscous' ? 'given table (spec or bench.toml)' : 'defaults, not fitted');
  assert.match(await page.textContent('#residual-best'), /^Best fitted model on this run: coulomb_viscous, residual RMS /);
  // Engineering notation on every time chart; the position of ±200 µrad in µrad.
  const x = await chartState('#run-timeseries .chart:has-text("Position")');
  assert.equal(x.label, 'x [µrad]');
  for (const title of ['Position', 'Velocity', 'Torque and model outputs', 'Residual']) readable((await chartState(`#run-timeseries .chart:has-text("${title}")`)).ticks, title);
  // The hysteresis loop plot's displacement axis too.
  const loops = await page.$eval('[data-testid="reversals-plot"]', (f) => ({ label: f.dataset.xLabel, ticks: f.dataset.xTicks.split('|') }));
  assert.equal(loops.label, 'displacement from the start [µrad]');
  readable(loops.ticks, 'reversal loops');
  await h.shot('charts-run-residual-rms');
});

noExternalRequests(h);
