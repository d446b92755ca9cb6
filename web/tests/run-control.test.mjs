// End-to-end tests of the dashboard (see e2e.test.mjs): runs driven and stopped from their
// pages (a compensation trial, a sweep stopped and resumed), the schedule and the queue, and
// characterisation campaigns. Each test makes the runs it reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { benchBin } from './bench.mjs';
import { harness, noExternalRequests, shots } from './harness.mjs';

// One daemon and one page for the file.
let bench, page, db;
const H = harness((h) => ({ bench, page, db } = h));
const { api, shot, go } = H;

// The launch form's sweep (as e2e.test.mjs fills it): four speeds in both directions.
const sweep = { velocities: '0.02, 0.3, 0.6, 1', repeats: '1', settle_s: '0.5', measure_s: '2' };

test('a compensation trial: the ranking table, the improvement bars and the errors around a reversal', async () => {
  // Two compensators on one sine (about 9 s): none, and Coulomb + viscous at the truth's levels.
  const spec = { kind: 'compensation_trial', name: 'e2e trial', params: {
    references: [{ sine: { amplitude_rad: 0.25, frequency_hz: 0.5, cycles: 2 } }],
    compensators: [{ name: 'none' }, { name: 'cv', model: 'coulomb_viscous', params: { fc: 1.0, fv: 0.05, negative: { fc: 0.9, fv: 0.05 } } }],
    repeats: 1, rest_s: 0.5, glitch_window_s: 0.25 } };
  const r = await api('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  assert.equal(r.status, 201, r.text);
  const id = r.json.id;
  const deadline = Date.now() + 60000;
  for (;;) {
    const run = (await api(`/api/runs/${id}`)).json;
    if (run.status === 'completed' && run.results) break;
    assert.ok(!['aborted', 'failed', 'interrupted'].includes(run.status), `run ${id} ended ${run.status}: ${run.status_reason}`);
    assert.ok(Date.now() < deadline, 'the trial completes in time');
    await new Promise((res) => setTimeout(res, 500));
  }
  const res = (await api(`/api/runs/${id}/results`)).json;
  await go(`runs/${id}`);
  const rows = page.locator('.trial-table tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2, 'one row per compensator');
  assert.equal(await rows.first().getAttribute('data-compensator'), res.ranking[0].name, 'ranked as the results');
  const bars = page.locator('[data-testid="improvement-bars"] .bar-row');
  assert.equal(await bars.count(), 2, 'one bar per compensator');
  const plot = page.locator('[data-testid="reversal-plot"]');
  assert.equal(Number(await plot.getAttribute('data-lines')), res.reversal_traces.length, 'one error trace per compensator');
  await shot('run-compensation-trial');
});

test('a sweep stopped halfway, resumed from its run page: one chain, one table, tags and notes', async () => {
  // Three velocities in two directions, short segments (about 5 s whole).
  const spec = { kind: 'constant_velocity_sweep', name: 'e2e resumed', params: { velocities: [0.3, 0.6, 1], repeats: 1, settle_s: 0.3, measure_s: 0.5 } };
  const post = (p, body) => api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const r = await post('/api/runs', spec);
  assert.equal(r.status, 201, r.text);
  const first = r.json.id;
  const until = async (id, done, what) => {
    const deadline = Date.now() + 60000;
    for (;;) {
      const run = (await api(`/api/runs/${id}`)).json;
      if (done(run)) return run;
      assert.ok(Date.now() < deadline, `run ${id}: ${what} (it is ${run.status})`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  // Stopped once half its segments are behind it: the first run measures some velocities
  // whole, its continuation the rest.
  const deadline = Date.now() + 60000;
  for (;;) {
    const live = (await api('/api/bench')).json;
    // This sweep's 12 segments (3 velocities, 2 directions, settle and measure): the live
    // state of the run before it can still be showing for a moment after this one starts.
    if (live.run_id === first && live.live.segments === 12 && live.live.segment >= 6) break;
    assert.ok(Date.now() < deadline, `run ${first} reaches its middle segment`);
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal((await post(`/api/runs/${first}/stop`)).status, 202);
  const stopped = await until(first, (run) => !['queued', 'running'].includes(run.status), 'stops after its segment');
  assert.equal(stopped.status, 'aborted', stopped.status_reason);
  await go(`runs/${first}`);
  await page.click('#run-resume');
  await page.waitForFunction((f) => /^#\/runs\/\d+$/.test(location.hash) && location.hash !== `#/runs/${f}`, first);
  const next = Number((await page.evaluate(() => location.hash)).split('/').pop());
  // Tags and notes typed while the continuation runs: the page's redraw when it completes
  // keeps them.
  await page.waitForSelector('#run-annotations');
  await page.fill('#ann-tags', 'resumed night');
  await page.fill('#ann-notes', 'stopped halfway, resumed from its page');
  const run = await until(next, (x) => x.status === 'completed' && x.results, 'completes with results');
  assert.equal(run.continues, first);
  assert.deepEqual(run.chain, [first, next]);
  // Its run log says what was left and what the first run measured whole.
  const left = run.run_log.find((e) => /^continues run/.test(e.reason))?.reason ?? '';
  const [, todo, measured] = left.match(/(\d+) of \d+ segments left to measure, (\d+) measured whole before/) ?? [];
  assert.ok(Number(todo) > 0 && Number(measured) > 0, left);
  // One Stribeck table for the chain: every velocity in both directions, each measured once.
  const speeds = (pts) => pts.map((p) => Math.abs(p.setpoint_rad_s)).sort((a, b) => a - b);
  assert.equal(run.results.positive.length, 3, JSON.stringify(run.results.positive));
  assert.equal(run.results.negative.length, 3, JSON.stringify(run.results.negative));
  assert.deepEqual(speeds(run.results.positive).map((v) => Math.round(v * 10) / 10), [0.3, 0.6, 1]);
  // The first run can no longer be resumed: its chain goes on.
  assert.equal((await post(`/api/runs/${first}/resume`)).status, 409);
  // Saved once the page has seen the run complete, then the chain with them on screen.
  await page.waitForFunction(() => document.querySelector('#run-status')?.textContent === 'completed');
  assert.equal(await page.inputValue('#ann-tags'), 'resumed night');
  assert.equal(await page.inputValue('#ann-notes'), 'stopped halfway, resumed from its page');
  await page.click('#ann-save');
  await page.waitForSelector('#run-annotations .notice.ok');
  await go(`runs/${next}`);
  await page.waitForSelector('#run-chain');
  assert.equal((await page.textContent('#run-chain')).replace(/\s+/g, ' ').trim(), `Chain (analysed as one run): #${first} → #${next}`);
  assert.equal(await page.isVisible('#run-resume'), false, 'a completed run offers no resume');
  await page.waitForSelector('[data-testid="stribeck-plot"]');
  assert.equal(Number(await page.getAttribute('[data-testid="stribeck-plot"]', 'data-points')), 6);
  await shot('run-resumed-chain');
});

test('schedule an item and see it in the queue; plan a nightly parameter sweep', async () => {
  await go('queue');
  await page.waitForSelector('#queue-paused');
  // Pause the queue so the scheduled run waits there.
  if (!(await page.isChecked('#queue-paused'))) await page.check('#queue-paused');
  await page.waitForFunction(async () => (await (await fetch('/api/queue')).json()).paused === true);
  await page.waitForSelector('#plan-form');
  // A start time in the past (a wrong year): the form says so before anything is sent, and
  // asks; declined, nothing is scheduled.
  const before = (await api('/api/schedule')).json.length;
  await page.selectOption('#plan-kind', 'constant_velocity_sweep');
  for (const [k, v] of Object.entries(sweep)) await page.fill(`#plan-param-${k}`, v);
  await page.fill('#plan-run-at', '2020-01-01T02:00:00');
  await page.waitForFunction(() => /in the past/.test(document.querySelector('#plan-preview')?.textContent ?? ''));
  assert.match(await page.textContent('#plan-preview'), /^1 run, about .*: from .* to .*\. The start time is .* in the past: scheduling it starts moving the bench now\.$/);
  await shot('schedule-past');
  let asked = await H.declined('#plan-submit', '#queue-notice', /not confirmed/);
  assert.match(asked, /is .* in the past: the bench starts moving now\. Schedule it\?/);
  assert.equal((await api('/api/schedule')).json.length, before, 'nothing scheduled');
  // Over REST the same entry is refused naming run_at, unless it says start_if_past.
  const refused = await api('/api/schedule', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ run_at: '2020-01-01T02:00:00Z', spec: { kind: 'prbs' } }) });
  assert.equal(refused.status, 422);
  assert.equal(refused.json.field, 'run_at');
  // A start a few seconds ahead starts moving the bench now: asked, accepted.
  const at = await page.evaluate(() => {
    const d = new Date(Date.now() + 4000);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  });
  await page.fill('#plan-run-at', at);
  await page.selectOption('#plan-kind', 'constant_velocity_sweep');
  for (const [k, v] of Object.entries(sweep)) await page.fill(`#plan-param-${k}`, v);
  await page.fill('#plan-name', 'e2e scheduled');
  page.once('dialog', async (d) => {
    asked = d.message();
    await d.accept();
  });
  await page.click('#plan-submit');
  await page.waitForSelector('#schedule-table tr[data-schedule-id]');
  assert.match(asked, /^This starts moving the bench now\. Schedule it\?$/);
  await shot('schedule');
  // When due, the scheduler enqueues it: it appears in the queue with its ETA.
  const row = page.locator('#queue-table tbody tr', { hasText: 'e2e scheduled' });
  await row.first().waitFor({ timeout: 30000 });
  const q = (await api('/api/queue')).json;
  const item = q.items.find((i) => i.name === 'e2e scheduled');
  assert.ok(item, 'the scheduled run is in the queue');
  await shot('queue');
  // Remove it and resume the queue.
  await row.first().locator('button', { hasText: 'Remove' }).click();
  await page.waitForFunction(async (id) => !(await (await fetch('/api/queue')).json()).items.some((i) => i.run_id === id), item.run_id);
  await page.uncheck('#queue-paused');
  // An overnight sweep: tomorrow 22:00, nightly, one parameter varied over a list.
  const entries = (await api('/api/schedule')).json.length;
  await page.fill('#plan-run-at', await page.evaluate(() => {
    const d = new Date(Date.now() + 86400e3);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T22:00:00`;
  }));
  await page.selectOption('#plan-recurrence', 'nightly');
  await page.selectOption('#plan-mode', 'sweep');
  await page.fill('#plan-sweep-param', 'params.velocities');
  await page.fill('#plan-sweep-values', '[[0.3], [0.6], [1]]');
  await page.fill('#plan-name', 'e2e nightly sweep');
  // The plan's size and time from the service: three runs, tomorrow evening; nothing to ask.
  await page.waitForFunction(() => /^3 runs, about /.test(document.querySelector('#plan-preview')?.textContent ?? ''));
  assert.doesNotMatch(await page.textContent('#plan-preview'), /now|past/);
  await page.click('#plan-submit');
  const sweepRow = page.locator('#schedule-table tbody tr', { hasText: 'params.velocities' });
  await sweepRow.first().waitFor();
  assert.match(await sweepRow.first().textContent(), /nightly/);
  const list = (await api('/api/schedule')).json;
  assert.equal(list.length, entries + 1);
  const entry = list.find((e) => e.sweep);
  assert.ok(entry && entry.recurrence === 'nightly' && entry.sweep.values.length === 3, JSON.stringify(list));
  await shot('schedule-sweep');
  await sweepRow.first().locator('button', { hasText: 'Delete' }).click();
  await page.waitForFunction(async (n) => (await (await fetch('/api/schedule')).json()).length === n, entries);
});

test('characterise: a short campaign (bench characterise on this daemon\'s store) listed, its steps linked to their runs, its report opened', async () => {
  const out = execFileSync(benchBin(), ['characterise', '--sim', '--models', 'coulomb_viscous', '--db', db], { encoding: 'utf8' });
  const id = Number(out.split('\n')[0].replace('campaign ', ''));
  assert.ok(id > 0, out);
  await go('characterise');
  await page.click(`a[href="#/characterise/${id}"]`);
  await page.waitForSelector('#campaign-answer');
  assert.match(await page.textContent('#campaign-status'), /completed/);
  // coulomb_viscous alone cannot describe the default (GMS) bench: the answer says so.
  assert.match(await page.textContent('#campaign-answer'), /none of the fitted models describes this bench: the best, coulomb_viscous, leaves [0-9.]+× the bench's floor \(its repeatability plus what its encoder cannot resolve\)/);
  const runLinks = await page.locator('#campaign a[href^="#/runs/"]').count();
  assert.equal(runLinks, 6, 'five steps and the trial, each linked to its run');
  const frame = page.frameLocator('#campaign-report-frame');
  await frame.locator('svg').first().waitFor();
  assert.match(await frame.locator('body').textContent(), /none of the fitted models describes this bench/);
  await shot('characterise-campaign');
  // A step's run page links back to its campaign.
  await page.click('#campaign a[href^="#/runs/"]');
  await page.click(`#run-campaign a[href="#/characterise/${id}"]`);
  await page.waitForSelector('#campaign-answer');
  const r = await fetch(`${bench.url}/api/campaigns/${id}/report`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/html/);
  await page.goto(`${bench.url}/api/campaigns/${id}/report`);
  await page.screenshot({ path: path.join(shots, 'characterise-report.png'), fullPage: true });
});

test('characterise: a campaign started from the page; a bad field named, a budget too small for its first step said', async () => {
  // The e-stop test before left the queue paused (a reset never resumes it): a campaign is
  // refused on a paused queue, so resume it first.
  const resumed = await api('/api/queue', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paused: false }) });
  assert.equal(resumed.status, 200, resumed.text);
  await go('characterise');
  await page.waitForSelector('#campaign-start');
  assert.match(await page.textContent('#camp-estimate'), /at most 20 min of bench time/);
  await page.fill('#camp-budget', '0.05');
  assert.match(await page.textContent('#camp-estimate'), /at most 0\.05 min of bench time/);
  await shot('characterise-start');
  // No model: refused, the field named, nothing created.
  const before = (await api('/api/campaigns')).json.length;
  for (const m of ['coulomb_viscous', 'stribeck_exp', 'lugre', 'gms']) await page.uncheck(`#camp-model-${m}`);
  await page.click('#camp-start');
  await page.waitForSelector('#campaign-start .notice.error');
  assert.match(await page.textContent('#campaign-start .notice.error'), /^models: /);
  assert.equal((await api('/api/campaigns')).json.length, before);
  // Three seconds of budget: the campaign is created, its first step is not started.
  await page.check('#camp-model-coulomb_viscous');
  await page.click('#camp-start');
  await page.waitForFunction(() => /^#\/characterise\/\d+$/.test(location.hash));
  await page.waitForFunction(() => /failed/.test(document.getElementById('campaign-status')?.textContent ?? ''));
  assert.match(await page.textContent('#campaign-status'), /step breakaway: .*over the 3 s left/);
  const id = Number((await page.evaluate(() => location.hash)).split('/').pop());
  const c = (await api(`/api/campaigns/${id}`)).json;
  assert.deepEqual(c.request.models, ['coulomb_viscous']);
  assert.equal(c.steps.length, 0, 'no step ran');
});

test('characterise: a running campaign stopped from its page (its step\'s run aborted, the campaign stopped)', async () => {
  await go('characterise');
  await page.waitForSelector('#campaign-start');
  for (const m of ['stribeck_exp', 'lugre', 'gms']) await page.uncheck(`#camp-model-${m}`);
  await page.check('#camp-model-coulomb_viscous');
  await page.fill('#camp-budget', '10');
  await page.click('#camp-start');
  await page.waitForSelector('#campaign-stop');
  const id = Number((await page.evaluate(() => location.hash)).split('/').pop());
  await shot('characterise-running');
  await page.click('#campaign-stop');
  await page.waitForFunction(() => /stopped/.test(document.getElementById('campaign-status')?.textContent ?? ''));
  assert.equal(await page.locator('#campaign-stop').count(), 0, 'no Stop button on a stopped campaign');
  const c = (await api(`/api/campaigns/${id}`)).json;
  assert.equal(c.status, 'stopped');
  const run = (await api(`/api/runs/${c.steps[0].run_id}`)).json;
  assert.equal(run.status, 'aborted');
  // A campaign scheduled for the night is listed on the queue page.
  const entry = { campaign: { models: ['lugre'], budget_min: 30 }, run_at: '2099-01-01T02:00:00Z', recurrence: 'nightly' };
  const added = await api('/api/schedule', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(entry) });
  assert.equal(added.status, 201, added.text);
  await go('queue');
  const row = page.locator('#schedule-table tbody tr', { hasText: 'characterisation campaign (lugre; at most 30 min)' });
  await row.waitFor();
  const gone = await api(`/api/schedule/${added.json.id}`, { method: 'DELETE' });
  assert.equal(gone.status, 204, gone.text);
});

noExternalRequests(H);
