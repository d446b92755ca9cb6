// End-to-end tests of the dashboard in a real headless Chromium (Debian's chromium driven by
// playwright-core) against `bench serve --sim`. Screenshots go to target/e2e-screenshots/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startBench, repo, benchBin } from './bench.mjs';
import { harness, noExternalRequests, shots, countPixels as pixels } from './harness.mjs';

// One daemon and one page for the whole flow: the runs each test leaves are the next one's input.
let bench, browser, page, db;
const H = harness((h) => ({ bench, browser, page, db } = h));
const { api, shot, go } = H;
const countPixels = (png) => pixels(page, png);

// Four speeds in both directions, 1.5 s each: a 12 s run with enough points for a static-curve
// fit; 0.02 rad/s is below the speed the velocity loop holds on the simulated bench, so its
// points are flagged stick-slip (left out of fits).
// About 20 s of bench time: long enough that the live plot is still streaming when the bench
// page has loaded, on a loaded 2-core machine too.
const sweep = { velocities: '0.02, 0.3, 0.6, 1', repeats: '1', settle_s: '0.5', measure_s: '2' };

// Every axis label fits the room beside its plot (issue 31: a cut-off label), measured with the
// font it is drawn in; returns how many labels were checked.
async function labelsFit(where) {
  const bad = await page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d');
    const width = (text, font) => { ctx.font = font; return ctx.measureText(text).width; };
    const out = [];
    let checked = 0;
    for (const el of document.querySelectorAll('.chart[data-y-label]')) {
      const room = el.querySelector('.u-over')?.getBoundingClientRect().height ?? 0;
      const w = width(el.dataset.yLabel, el.dataset.labelFont);
      checked++;
      if (w > room) out.push(`${el.dataset.yLabel}: ${w.toFixed(0)} px in ${room.toFixed(0)} px`);
    }
    for (const f of document.querySelectorAll('figure.xyplot')) {
      for (const [label, room] of [[f.dataset.xLabel, f.dataset.xRoom], [f.dataset.yLabel, f.dataset.yRoom]]) {
        const w = width(label, f.dataset.labelFont);
        checked++;
        if (w > Number(room)) out.push(`${label}: ${w.toFixed(0)} px in ${room} px`);
      }
    }
    return { out, checked };
  });
  assert.deepEqual(bad.out, [], `${where}: axis labels cut off`);
  assert.ok(bad.checked > 0, `${where}: no axis label found to check`);
}

async function fillSweep(values) {
  await go('launch');
  await page.waitForSelector('#launch-form');
  await page.selectOption('#launch-kind', 'constant_velocity_sweep');
  for (const [k, v] of Object.entries(values)) await page.fill(`#launch-param-${k}`, v);
}

test('an out-of-limit value: the server message beside the field, nothing started', async () => {
  const before = (await api('/api/runs?limit=1000')).json;
  await fillSweep({ ...sweep, velocities: '0.5, 1000' });
  // The same spec sent straight to the server: its 422 names the field and the limit.
  const direct = await api('/api/experiments/check', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'constant_velocity_sweep', params: { velocities: [0.5, 1000], repeats: 1, settle_s: 0.5, measure_s: 2 } }),
  });
  assert.equal(direct.status, 422, direct.text);
  assert.match(direct.json.field, /^params\.velocities/);
  await page.click('#launch-start');
  await page.waitForFunction(() => document.querySelector('#launch-result')?.textContent?.startsWith('Not started'));
  const err = page.locator('#launch-err-velocities');
  assert.ok(await err.isVisible(), 'error shown beside the velocities field');
  assert.equal((await err.textContent()).trim(), direct.json.error);
  assert.equal(await page.getAttribute('#launch-param-velocities', 'aria-invalid'), 'true');
  // The error element is inside the velocities field's block.
  assert.equal(await page.locator('[data-field="velocities"] #launch-err-velocities').count(), 1);
  await shot('launch-error');
  const after_ = (await api('/api/runs?limit=1000')).json;
  assert.equal(after_.total, before.total, 'no run was created');
  assert.deepEqual(after_.runs.map((r) => r.id), before.runs.map((r) => r.id));
});

test('a launch estimated over an hour asks first; declined, nothing starts', async () => {
  const before = (await api('/api/runs?limit=1000')).json;
  await fillSweep({ ...sweep, repeats: '1000' });
  const asked = await H.declined('#launch-start', '#launch-result', /^Not started/);
  assert.match(asked, /estimated to take .*Start it\?/);
  assert.match(await page.textContent('#launch-result'), /not confirmed/);
  const after_ = (await api('/api/runs?limit=1000')).json;
  assert.equal(after_.total, before.total, 'no run was created');
});

let runId;
// The presliding run of the run-pages test, fitted on the Models & fits page.
let presRunId;

test('launch a constant-velocity sweep from the form and watch the live plot', async () => {
  await fillSweep(sweep);
  await page.waitForFunction(() => /Estimated duration/.test(document.getElementById('launch-estimate')?.textContent ?? ''));
  // The previous test's refusal went stale when the form was edited.
  assert.equal((await page.textContent('#launch-result')).trim(), '');
  // The form comes from the kind's schema: each unit apart from its name, beside the input,
  // fields in declaration order, the documented choices for enumerations.
  assert.equal((await page.textContent('label[for="launch-param-velocities"]')).trim(), 'velocities');
  assert.equal(await page.textContent('#launch-param-velocities-unit'), 'rad/s');
  assert.equal((await page.textContent('label[for="launch-param-settle_s"]')).trim(), 'settle');
  assert.equal(await page.textContent('#launch-param-settle_s-unit'), 's');
  const order = await page.$$eval('#launch-form [data-field]', (els) => els.map((e) => e.getAttribute('data-field')));
  assert.deepEqual(order, ['velocities', 'directions', 'settle_s', 'measure_s', 'repeats']);
  const choices = await page.$$eval('#launch-param-directions option', (els) => els.map((e) => e.value));
  assert.deepEqual(choices, ['both', 'positive', 'negative']);
  await shot('launch');
  await page.click('#launch-start');
  await page.waitForSelector('#launch-result[data-run-id]');
  runId = Number(await page.getAttribute('#launch-result', 'data-run-id'));
  assert.ok(runId > 0);
  await go('bench');
  const total = async () => Number(await page.getAttribute('#live-charts', 'data-total'));
  await page.waitForFunction(() => Number(document.getElementById('live-charts')?.dataset.total) > 10, null, { timeout: 30000 });
  const first = await total();
  await page.waitForFunction((n) => Number(document.getElementById('live-charts')?.dataset.total) > n + 10, first, { timeout: 20000 })
    .catch(async () => {
      const run = (await api(`/api/runs/${runId}`)).json;
      assert.fail(`the live plot stopped at ${await total()} points (${first} before); the run is ${run.status} with ${run.sample_count} samples`);
    });
  const second = await total();
  assert.ok(second > first, `live points increase (${first} → ${second})`);
  // The chart really drew the points: uPlot's canvas for the torque chart is not blank.
  const torque = await page.locator('#chart-torque canvas').screenshot();
  const px = await countPixels(torque);
  assert.ok(px.data > 50, `torque chart has coloured series pixels (${JSON.stringify(px)})`);
  await labelsFit('bench page');
  await shot('bench-live');
});

test('the run completes and shows in the runs list', async () => {
  await go('runs');
  await page.waitForSelector(`#runs-table tr[data-run-id="${runId}"][data-status="completed"]`, { timeout: 90000 });
  // The idle bench page counts the samples the run stored.
  const stored = (await api(`/api/runs/${runId}`)).json.sample_count;
  await go('bench');
  const samples = page.locator('#bench-state tr', { hasText: 'samples' }).locator('td');
  await page.waitForFunction((n) => [...document.querySelectorAll('#bench-state tr')].some((tr) => tr.textContent.replace(/[\s\u202f,]/g, '').includes(`samples${n}`)), stored, { timeout: 10000 })
    .catch(async () => assert.fail(`the bench page shows ${await samples.textContent()} samples, the run stored ${stored}`));
  await go('runs');
  await page.waitForSelector(`#runs-table tr[data-run-id="${runId}"]`);
  // The bench it was recorded on: `bench serve --sim` is the bench `sim`.
  assert.equal(await page.textContent(`#runs-table tr[data-run-id="${runId}"] td.bench`), 'sim');
  await shot('runs');
  // Filtered by another bench, nothing; by `sim`, the run again.
  await page.fill('#runs-bench', 'bench-2');
  await page.click('form.filters button[type=submit]');
  await page.waitForFunction(() => /^0 runs match/.test(document.getElementById('runs-total')?.textContent ?? ''));
  await page.fill('#runs-bench', 'sim');
  await page.click('form.filters button[type=submit]');
  await page.waitForSelector(`#runs-table tr[data-run-id="${runId}"]`);
  await page.fill('#runs-bench', '');
});

test('run page: Stribeck plot with the expected points, CSV and Parquet export', async () => {
  await page.click(`#runs-table tr[data-run-id="${runId}"] a`);
  await page.waitForSelector('[data-testid="stribeck-plot"]');
  const results = (await api(`/api/runs/${runId}/results`)).json;
  const expected = results.positive.length + results.negative.length;
  assert.equal(expected, 8, 'four velocities in two directions');
  assert.equal(Number(await page.getAttribute('[data-testid="stribeck-plot"]', 'data-points')), expected);
  // Points flagged stick-slip are drawn as rings, with a legend entry saying they are left out.
  const flagged = [...results.positive, ...results.negative].filter((p) => p.stick_slip).length;
  assert.equal(Number(await page.getAttribute('[data-testid="stribeck-plot"]', 'data-hollow')), flagged);
  const legend = await page.textContent('[data-testid="stribeck-plot"] .legend');
  assert.equal(/stick-slip: left out of fits/.test(legend), flagged > 0, legend);
  await labelsFit('sweep run page');
  const png = await page.locator('[data-testid="stribeck-plot"] canvas').screenshot({ path: path.join(shots, 'stribeck.png') });
  const px = await countPixels(png);
  assert.ok(px.nonBackground > 1000, `plot not blank (${JSON.stringify(px)})`);
  assert.ok(px.data >= 4 * 20, `the ${expected} points and their error bars are drawn (${JSON.stringify(px)})`);
  await page.waitForSelector('#run-timeseries .chart');
  // A completed run: nothing in its interruption log; the watchdog read back in its run log.
  assert.match(await page.textContent('#run-interruptions'), /Nothing interrupted this run/);
  assert.match(await page.textContent('#run-log'), /drive communication watchdog [0-9.]+ s \(read back\)/);
  await shot('run');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = readFileSync(await download.path(), 'utf8');
  assert.match(csv.split('\n')[0], /^idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags/);
  assert.ok(csv.trim().split('\n').length > 100, 'the CSV has the samples');
  const [pq] = await Promise.all([page.waitForEvent('download'), page.click('#export-parquet')]);
  const bytes = readFileSync(await pq.path());
  assert.equal(bytes.subarray(0, 4).toString(), 'PAR1', 'a Parquet file');
  assert.equal(bytes.subarray(bytes.length - 4).toString(), 'PAR1');
});

test('run page: tags and notes edited in place; compared with a run', async () => {
  await page.waitForSelector('#run-annotations');
  await page.fill('#ann-tags', 'good e2e');
  await page.fill('#ann-notes', 'bearing re-greased before this run');
  await page.click('#ann-save');
  await page.waitForSelector('#run-annotations .notice.ok');
  const run = (await api(`/api/runs/${runId}`)).json;
  assert.deepEqual(run.tags, ['e2e', 'good']);
  assert.equal(run.notes, 'bearing re-greased before this run');
  // The edit is in the audit log, with the old values.
  const audit = (await api('/api/audit?limit=5')).json;
  assert.ok(audit.some((e) => e.method === 'PATCH' && e.run_id === runId && e.allowed), JSON.stringify(audit));
  // Compared with itself: no difference; with a run that does not exist: the error, named.
  await page.fill('#ann-with', String(runId));
  await page.click('#ann-compare');
  await page.waitForSelector('#ann-diff p.ok');
  assert.match(await page.textContent('#ann-diff'), /no difference/);
  await page.fill('#ann-with', '999999');
  await page.click('#ann-compare');
  await page.waitForSelector('#ann-diff p.bad');
  await shot('run-annotations');
});

test('run pages of the other kinds: breakaway vs torque rate, lag loops, presliding loops', async () => {
  // Short versions of experiments/specs/*.json, enqueued through the API (about 9 s in all).
  const specs = [
    { kind: 'torque_ramp', name: 'e2e ramp', params: { rates_nm_s: [2.5, 5], directions: 'both', repeats: 1, motion_counts: 10, rest_s: 0.5 } },
    { kind: 'frictional_lag', name: 'e2e lag', params: { mean_rad_s: 1, amplitude_rad_s: 0.95, omegas_rad_s: [10], cycles: 2, settle_s: 0.5, chirp: null, mirror: false } },
    { kind: 'presliding', name: 'e2e presliding', params: { parts: ['ramp', 'reversals'], ramp_rate_rad_s: 0.01, ramp_distance_rad: 0.02, ramp_repeats: 1, reversals_rad: [0.002, -0.002, 0.001, -0.0005], reversals_rate_rad_s: 0.004, rest_s: 0.5 } },
  ];
  const ids = [];
  for (const spec of specs) {
    const r = await api('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
    assert.equal(r.status, 201, r.text);
    ids.push(r.json.id);
  }
  const deadline = Date.now() + 90000;
  for (const id of ids) {
    for (;;) {
      const run = (await api(`/api/runs/${id}`)).json;
      if (run.status === 'completed' && run.results) break;
      assert.ok(!['aborted', 'failed', 'interrupted'].includes(run.status), `run ${id} ended ${run.status}: ${run.status_reason}`);
      assert.ok(Date.now() < deadline, `run ${id} completes in time`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const [ramp, lag, pre] = ids;
  presRunId = pre;
  const figure = async (id, testId) => {
    await go(`runs/${id}`);
    const f = page.locator(`[data-testid="${testId}"]`);
    await f.waitFor();
    return { points: Number(await f.getAttribute('data-points')), lines: Number(await f.getAttribute('data-lines')), f };
  };
  let r = (await api(`/api/runs/${ramp}/results`)).json;
  let fig = await figure(ramp, 'breakaway-plot');
  assert.equal(fig.points, r.positive.length + r.negative.length, 'one marker per breakaway row');
  assert.ok(fig.points > 0);
  await shot('run-torque-ramp');
  r = (await api(`/api/runs/${lag}/results`)).json;
  fig = await figure(lag, 'lag-plot');
  assert.equal(fig.lines, r.loops.filter((l) => l.loop_v_torque.x.length >= 2).length, 'one loop per lag run');
  assert.ok(fig.lines > 0);
  await shot('run-frictional-lag');
  r = (await api(`/api/runs/${pre}/results`)).json;
  fig = await figure(pre, 'presliding-plot');
  assert.equal(fig.lines, r.ramps.length, 'the breakaway ramps drawn');
  assert.ok(fig.lines > 0);
  const loops = page.locator('[data-testid="reversals-plot"]');
  assert.equal(Number(await loops.getAttribute('data-lines')), 1, 'the reversal loops drawn');
  assert.equal(Number(await loops.getAttribute('data-points')), r.reversals.reversal_points.x.length, 'one marker per reversal point');
  await labelsFit('presliding run page');
  await shot('run-presliding');
});

test('models & fits: the models listed; a static-curve fit on the run, drawn on its Stribeck plot', async () => {
  await go('models');
  await page.waitForSelector('details.model');
  const models = (await api('/api/models')).json;
  assert.ok(models.length > 0);
  assert.equal(await page.locator('details.model').count(), models.length);
  await page.waitForSelector('#fit-form');
  await shot('models');
  await page.selectOption('#fit-run', String(runId));
  await page.selectOption('#fit-model', 'coulomb_viscous');
  await page.selectOption('#fit-procedure', 'static_curve');
  await page.click('#fit-form button[type=submit]');
  await page.waitForSelector('#fit-result table', { timeout: 30000 });
  const fitted = await page.textContent('#fit-result');
  assert.match(fitted, /fc/);
  assert.match(fitted, /fv/);
  // The numbers shown are the service's: each fitted value (and standard error, where the
  // stored provenance keeps them) against the parameter set the fit saved.
  const setId = Number((await page.textContent('#fit-notice')).match(/parameter set #(\d+)/)?.[1]);
  const set = (await api(`/api/parameter-sets/${setId}`)).json;
  const shown = await page.$$eval('#fit-result table.data tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  assert.deepEqual(shown.map((r) => r[0]).filter((n) => !n.startsWith('negative.')).sort(), ['fc', 'fv']);
  const near = (text, want, what) => assert.ok(typeof want === 'number' && Math.abs(Number(text) - want) <= 1e-3 * Math.abs(want) + 1e-12, `${what}: shown ${text}, stored ${want}`);
  // `negative.fc` is the stored set's `negative: {fc}`.
  const at = (obj, name) => name.split('.').reduce((o, k) => o?.[k], obj);
  for (const [name, value, , se] of shown) {
    near(value, at(set.params, name), name);
    const stored = at(set.provenance?.std_errors, name);
    if (typeof stored === 'number') near(se, stored, `std error of ${name}`);
  }
  await shot('models-fit');
  const sets = (await api('/api/parameter-sets?model=coulomb_viscous')).json;
  assert.ok(sets.some((s) => (s.provenance?.runs ?? []).includes(runId)), 'the parameter set names the run');
  await go(`runs/${runId}`);
  await page.waitForSelector('[data-testid="stribeck-plot"]');
  assert.equal(Number(await page.getAttribute('[data-testid="stribeck-plot"]', 'data-lines')), 1, 'the fitted curve is drawn');
  assert.match(await page.textContent('[data-testid="stribeck-plot"] .legend'), /fitted coulomb_viscous/);
  // The curve drawn is the service's (POST /api/curves, the friction crate's model law).
  const [endV, endF] = (await page.getAttribute('[data-testid="stribeck-plot"]', 'data-fitted-end')).split(',').map(Number);
  const fittedSet = sets.find((s) => (s.provenance?.runs ?? []).includes(runId));
  const served = (await H.post('/api/curves', { model: 'coulomb_viscous', params: fittedSet.params, v: [endV] })).json;
  assert.ok(Number.isFinite(endF) && endF === served.friction[0], `plotted ${endF}, service ${served.friction[0]}`);
  await page.locator('[data-testid="stribeck-plot"]').screenshot({ path: path.join(shots, 'stribeck-fit.png') });
  await shot('run-fit');
  // A time-series fit shows the fitted set's output against the data it was fitted to: the
  // GMS elements from the presliding run's ramps (maxwell_slip), the model replayed on them.
  await go('models');
  await page.waitForSelector('#fit-form');
  await page.selectOption('#fit-run', String(presRunId));
  await page.selectOption('#fit-model', 'gms');
  await page.selectOption('#fit-procedure', 'maxwell_slip');
  await page.click('#fit-form button[type=submit]');
  await page.waitForSelector('[data-testid="fit-replay"] canvas', { timeout: 30000 });
  assert.match(await page.textContent('#fit-result'), /\bk\b[\s\S]*\balpha\b|\balpha\b[\s\S]*\bk\b/);
  const replay = page.locator('[data-testid="fit-replay"]');
  assert.match(await replay.textContent(), /measured[\s\S]*model/);
  const px = await countPixels(await replay.locator('canvas').screenshot());
  assert.ok(px.data > 500, `the replay is drawn (${px.data} pixels in the series colours)`);
  await replay.screenshot({ path: path.join(shots, 'fit-replay.png') });
});

test('trends: a fitted parameter over the runs, plotted per bench with its limits, each point linked to its run; a bad date named', async () => {
  const sets = (await api('/api/parameter-sets?model=coulomb_viscous')).json;
  const fittedRuns = new Set(sets.flatMap((s) => s.provenance?.runs ?? []));
  const expected = (await api('/api/trends?param=fc&model=coulomb_viscous')).json;
  assert.equal(expected.points.length, fittedRuns.size, 'one point per fitted run');
  await go('trends');
  await page.fill('#trends-param', 'fc');
  await page.fill('#trends-model', 'coulomb_viscous');
  await page.click('#trends-form button[type=submit]');
  await page.waitForSelector('#trends-table tbody tr');
  assert.equal(await page.locator('#trends-table tbody tr').count(), expected.points.length);
  const first = expected.points[0];
  const plot = page.locator(`[data-testid="trend-plot-${first.bench_id}"]`);
  await plot.locator('canvas').waitFor();
  assert.equal(Number(await plot.getAttribute('data-points')), expected.points.filter((p) => p.bench_id === first.bench_id).length);
  assert.match(await page.textContent('#trends-summary'), new RegExp(`${expected.points.length} points, ${expected.outside} outside`));
  await shot('trends');
  await page.click(`#trends-table a[href="#/runs/${first.run_id}"]`);
  await page.waitForSelector('main[data-page="Run"]');
  await go('trends');
  await page.fill('#trends-since', '2026-13-01');
  await page.click('#trends-form button[type=submit]');
  await page.waitForSelector('#trends-out [role=alert]');
  assert.match(await page.textContent('#trends-out [role=alert]'), /since/);
});

test('a comparison: a ranked table with a model column and a bar chart of validation errors', async () => {
  const r = await api('/api/comparisons', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ estimate: [runId], validate: [runId], models: ['coulomb_viscous', 'stribeck_exp'] }),
  });
  assert.ok(r.status < 300, r.text);
  await go('runs');
  await go(`runs/${runId}`);
  await page.waitForSelector('.comparison-table');
  const models = await page.$$eval('.comparison-table tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-model')));
  assert.deepEqual([...models].sort(), ['coulomb_viscous', 'stribeck_exp']);
  const ranks = await page.$$eval('.comparison-table tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
  // Two ranks, or one shared: a Stribeck fit that found no Stribeck effect scores exactly what
  // the line it contains does, and then the line is listed first.
  if (ranks[1] === '1') {
    assert.deepEqual(models, ['coulomb_viscous', 'stribeck_exp']);
    assert.equal(ranks[0], '1');
  } else {
    assert.deepEqual(ranks, ['1', '2']);
  }
  assert.equal(await page.locator('.comparison .bars .bar-row').count(), 2);
  assert.doesNotMatch(await page.textContent('.comparison'), /estimation\.n_gross_sliding|estimation runs \[\]/);
  await page.locator('.comparison').first().screenshot({ path: path.join(shots, 'comparison.png') });
});

test('a run on the fitted set: lockstep "latest", the measured torque fills the plot, a runaway model clipped and marked', async () => {
  // The static fit above saved a coulomb_viscous set of this bench; LuGre has none and runs on
  // the papers' defaults (sigma0 = 1e5 on a 1000 N m/rad bench), whose spikes are clipped.
  const spec = { kind: 'constant_velocity_sweep', name: 'e2e lockstep on the fitted set',
    params: { velocities: [0.5, 1.0], directions: 'both', settle_s: 0.5, measure_s: 0.5, repeats: 1 },
    lockstep: { models: ['coulomb_viscous', 'lugre'], params: { coulomb_viscous: 'latest' } } };
  const r = await api('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  assert.equal(r.status, 201, r.text);
  const id = r.json.id;
  const deadline = Date.now() + 60000;
  let run;
  for (;;) {
    run = (await api(`/api/runs/${id}`)).json;
    if (run.status === 'completed') break;
    assert.ok(!['aborted', 'failed', 'interrupted'].includes(run.status), `run ${id} ended ${run.status}: ${run.status_reason}`);
    assert.ok(Date.now() < deadline, 'the run completes in time');
    await new Promise((res) => setTimeout(res, 500));
  }
  const sets = (await api('/api/parameter-sets?model=coulomb_viscous')).json;
  const newest = Math.max(...sets.map((s) => s.id));
  const used = run.bench_config.lockstep_sets;
  assert.deepEqual(used.find((u) => u.model === 'coulomb_viscous'), { model: 'coulomb_viscous', source: 'latest', set_id: newest, set_name: sets.find((s) => s.id === newest).name });
  await go(`runs/${id}`);
  const chart = page.locator('.chart', { hasText: 'Torque and model outputs' });
  await chart.waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('.chart')].some((c) => c.dataset.yRange));
  // The scale is the measured torque's own range (both signals), not the model's spikes.
  const samples = (await api(`/api/runs/${id}/samples?every=${Math.max(1, Math.ceil(run.sample_count / 20000))}&format=json`)).json;
  const measured = [...samples.torque_motor, ...samples.torque_sensor].filter((y) => y != null && Number.isFinite(y));
  const [mlo, mhi] = [Math.min(...measured), Math.max(...measured)];
  const pad = (mhi - mlo) * 0.08; // the chart's margin
  const [lo, hi] = (await chart.getAttribute('data-y-range')).split(',').map(Number);
  assert.ok(Math.abs(lo - (mlo - pad)) < 1e-9 && Math.abs(hi - (mhi + pad)) < 1e-9, `y range ${lo}..${hi}, measured ${mlo}..${mhi}`);
  const lugre = samples.outputs.lugre.filter((y) => y != null);
  assert.ok(Math.max(...lugre.map(Math.abs)) > 2 * Math.max(Math.abs(lo), Math.abs(hi)), 'the default LuGre runs away on this bench');
  assert.ok(Number(await chart.getAttribute('data-clipped')) > 0, 'its samples beyond the measured range are clipped');
  assert.match(await chart.locator('.clip-note').textContent(), /clipped at the edge and marked with dots: .*lugre/);
  await chart.screenshot({ path: path.join(shots, 'run-lockstep-fitted.png') });
  await shot('run-lockstep-fitted-page');
});

/**
 * A joint's recording as Excel writes CSV in much of Europe: a byte order mark, semicolons,
 * decimal commas, quoted names, a units row, CRLF; friction of an exponential Stribeck curve.
 */
function excelCsv() {
  const rows = ['\ufeff"Time";"Angle";"Speed";"Torque";"Friction"', 's;rad;rad/s;N m;N m'];
  const w = 2 * Math.PI * 0.5;
  for (let k = 0; k < 3000; k++) {
    const t = k * 1e-3;
    const v = 0.5 * Math.sin(w * t) + 0.05;
    const f = Math.sign(v) * (0.25 + 0.15 * Math.exp(-((v / 0.05) ** 2))) + 0.02 * v;
    const cells = [t, -0.5 / w * Math.cos(w * t) + 0.05 * t, v, f + 0.01 * 0.5 * w * Math.cos(w * t), f];
    rows.push(cells.map((c) => String(c).replace('.', ',')).join(';'));
  }
  return rows.join('\r\n') + '\r\n';
}

const fixture = (name) => path.join(repo, 'bench-cli', 'tests', 'fixtures', name);

test('import a CSV, a MAT-file and a Parquet file from the Runs page; the imported run fitted and compared', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fb-e2e-import-'));
  const csv = path.join(dir, 'joint-excel.csv');
  writeFileSync(csv, excelCsv());
  const before = (await api('/api/runs?limit=1000')).json.total;
  // A refused file: the server's message under the form, nothing stored.
  const bad = path.join(dir, 'broken.csv');
  writeFileSync(bad, 't,x\n0,1\n0.001,one\n');
  await go('runs');
  await page.setInputFiles('#import-file', bad);
  await page.click('#import-submit');
  await page.waitForFunction(() => /^Not imported/.test(document.getElementById('import-result')?.textContent ?? ''));
  assert.equal(await page.textContent('#import-result'), "Not imported: broken.csv: line 3, column 'x': 'one' is not a number");
  assert.equal((await api('/api/runs?limit=1000')).json.total, before, 'nothing stored');
  const ids = {};
  for (const [format, file, columns, scales] of [
    ['csv', csv, 't=Time,x=Angle,v=Speed,u=Torque,friction=Friction', ''],
    ['mat', fixture('joint.mat'), 't=t,x=angle,v=drive:2,u=drive:1,friction=friction', ''],
    ['parquet', fixture('joint.parquet'), 't=time,x=angle,v=speed,u=torque,friction=friction', 'x=2'],
  ]) {
    await go('runs');
    await page.setInputFiles('#import-file', file);
    await page.fill('#import-columns', columns);
    await page.fill('#import-scales', scales);
    await page.fill('#import-name', `e2e ${format}`);
    if (format === 'csv') await shot('runs-import');
    await page.click('#import-submit');
    // The form opens the new run's page.
    await page.waitForFunction(() => /^#\/runs\/\d+$/.test(location.hash), null, { timeout: 30000 });
    const id = Number(await page.evaluate(() => location.hash.split('/').pop()));
    ids[format] = id;
    await page.waitForSelector('[data-testid="imported-scatter"]');
    const run = (await api(`/api/runs/${id}`)).json;
    assert.equal(run.kind, 'imported');
    assert.equal(run.name, `e2e ${format}`);
    assert.equal(run.spec.source.format, format);
    assert.equal(await page.textContent('#import-sha256'), run.spec.source.sha256);
    assert.equal(Number(await page.getAttribute('[data-testid="imported-scatter"]', 'data-points')), run.sample_count, 'every sample in the scatter');
    const px = await countPixels(await page.locator('[data-testid="imported-scatter"] canvas').screenshot());
    assert.ok(px.data > 1000, `the scatter is drawn (${JSON.stringify(px)})`);
    assert.equal(await page.locator('#run-timeseries .chart').count(), 3, 'position, velocity, torque');
    assert.equal(await page.locator('#run-status').textContent(), 'completed');
    await shot(`run-imported-${format}`);
  }
  // In the runs list, filtered by kind.
  await go('runs');
  await page.selectOption('#runs-kind', 'imported');
  await page.click('form.filters button[type=submit]');
  await page.waitForFunction(() => /^3 runs match/.test(document.getElementById('runs-total')?.textContent ?? ''));
  await page.selectOption('#runs-kind', '');
  // Fitted from the Models & fits page: the Stribeck curve comes back from the Parquet file.
  await go('models');
  await page.waitForSelector('#fit-form');
  await page.selectOption('#fit-run', String(ids.parquet));
  await page.selectOption('#fit-model', 'stribeck_exp');
  await page.selectOption('#fit-procedure', 'static_curve');
  await page.fill('#fit-given', '{"delta": 2}');
  await page.click('#fit-form button[type=submit]');
  await page.waitForSelector('#fit-result table', { timeout: 30000 });
  const sets = (await api('/api/parameter-sets?model=stribeck_exp')).json;
  const fitted = sets.find((s) => (s.provenance?.runs ?? []).includes(ids.parquet));
  assert.ok(fitted, 'the parameter set names the imported run');
  assert.ok(Math.abs(fitted.params.fc - 0.25) < 0.01 && Math.abs(fitted.params.fs - 0.4) < 0.02, JSON.stringify(fitted.params));
  await shot('models-fit-imported');
  // Compared: estimated on the MAT import, validated on the CSV one; listed on both pages.
  const r = await api('/api/comparisons', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ estimate: [ids.mat], validate: [ids.csv], models: ['coulomb_viscous', 'stribeck_exp=fc+fs+vs+fv'] }),
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.rows[0].model, 'stribeck_exp', 'the generating model ranks first');
  await go(`runs/${ids.csv}`);
  await page.waitForSelector('#run-comparisons .comparison-table');
  assert.equal(await page.locator('#run-comparisons .comparison-table tbody tr').count(), 2);
  await shot('run-imported-compared');
});

test('a lab view: every run of the store pushed to PostgreSQL, read-only, no e-stop', async () => {
  // The lab's store: this daemon's runs pushed into a fresh PostgreSQL database of the test
  // cluster ($FRICTIONBENCH_TEST_PG, scripts/test.sh); without one, the SQLite file itself.
  let labDb = db;
  const admin = process.env.FRICTIONBENCH_TEST_PG;
  if (admin) {
    const name = `e2e_lab_${process.pid}`;
    execFileSync('psql', [admin, '-qc', `CREATE DATABASE ${name}`]);
    const [base, query] = admin.split('?');
    labDb = `${base.replace(/\/[^/]*$/, `/${name}`)}${query ? `?${query}` : ''}`;
    execFileSync(benchBin(), ['runs', 'push', '--db', db, '--to', labDb]);
  }
  const lab = await startBench({ db: labDb, mode: ['--lab'] });
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const labPage = await ctx.newPage();
  try {
    const ours = (await api('/api/runs?limit=1000')).json;
    const finished = ours.runs.filter((r) => !['queued', 'running'].includes(r.status));
    await labPage.goto(`${lab.url}/#/runs`);
    await labPage.waitForSelector('#lab-view:not([hidden])');
    assert.equal(await labPage.isVisible('#estop'), false, 'no bench: no e-stop');
    await labPage.waitForFunction((n) => document.querySelectorAll('td.bench').length >= n, Math.min(finished.length, 50));
    // Recorded runs name their bench; imported recordings (pushed too) have none.
    const rows = await labPage.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => [tr.children[2].textContent, tr.querySelector('td.bench').textContent]));
    for (const [kind, bench] of rows) assert.equal(bench, kind === 'imported' ? '—' : 'sim', kind);
    assert.ok(rows.some(([kind]) => kind === 'imported'), 'the imported runs are in the lab too');
    await labPage.screenshot({ path: path.join(shots, 'lab-view.png'), fullPage: true, style: 'header.top { position: static !important; }' });
    const refused = await fetch(`${lab.url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"spec": {"kind": "prbs"}}' });
    assert.equal(refused.status, 409);
    assert.match((await refused.json()).error, /lab view/);
  } finally {
    await ctx.close();
    await lab.stop();
  }
});

noExternalRequests(H);
