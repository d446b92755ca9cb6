// The Bench page: state and limits, the live charts (reconnecting after a daemon restart, 20 000
// points per series), the e-stop from the keyboard, and what every page shares (the skip link,
// the icon).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBench } from './bench.mjs';
import { harness, noExternalRequests, countPixels } from './harness.mjs';

let bench, page, db;
const H = harness((h) => ({ bench, page, db } = h));
const { api, shot, go } = H;

test('bench page: state, limits and the live stream connected', async () => {
  await go('bench');
  await page.waitForFunction(() => document.getElementById('conn')?.textContent?.includes('connected'));
  await page.waitForSelector('text=torque');
  assert.ok(await page.isVisible('#estop-big'), 'the big e-stop is shown');
  // The e-stop is a real button reachable from the keyboard.
  assert.equal(await page.getAttribute('#estop-big', 'type'), 'button');
  await shot('bench');
});

test('the live stream reconnects after a daemon restart', async () => {
  await go('bench');
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live: connected');
  const port = new URL(bench.url).port;
  await bench.stop();
  await page.waitForFunction(() => document.getElementById('conn')?.textContent?.includes('reconnecting'), null, { timeout: 15000 });
  let err;
  for (let i = 0; i < 20; i++) {
    try {
      bench = H.bench = await startBench({ db, listen: `127.0.0.1:${port}` });
      err = null;
      break;
    } catch (e) {
      err = e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  if (err) throw err;
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live: connected', null, { timeout: 20000 });
  await shot('bench-reconnected');
});

test('live charts: 20 000 points per series for every model; a dropped event shows "dropping data"', async (t) => {
  await go('bench');
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live: connected');
  const models = (await api('/api/bench')).json.models;
  assert.ok(models.length > 0, 'the bench runs lockstep models');
  // Feed the page's live buffer as the stream would (the bench is idle now).
  await page.evaluate((models) => {
    const live = window.frictionbench.live;
    live.ring.clear(models);
    for (let k = 0; k < 20000; k++) {
      const t = k * 1e-3;
      const f = Math.tanh(Math.sin(t * 3) * 20) * 1.2;
      live.onSample({ idx: k, sample: { t, x: Math.cos(t * 3), v: Math.sin(t * 3), u_cmd: f, torque_motor: f, torque_sensor: f + 0.01 * Math.sin(t * 200), segment: 0, flags: 0 }, outputs: models.map((m, i) => f * (1 + 0.01 * i)), models });
    }
  }, models);
  await page.waitForFunction(() => Number(document.getElementById('live-charts')?.dataset.points) === 20000);
  await page.waitForFunction(() => document.getElementById('live-charts')?.dataset.drawMs !== undefined);
  const drawMs = Number(await page.getAttribute('#live-charts', 'data-draw-ms'));
  t.diagnostic(`redraw of 5 charts, ${models.length} lockstep columns, 20000 points per series: ${drawMs} ms`);
  const px = await countPixels(page, await page.locator('#chart-torque canvas').screenshot());
  assert.ok(px.data > 500, `torque chart drawn (${JSON.stringify(px)})`);
  await shot('bench-20k');
  assert.ok(await page.isHidden('#dropping'));
  await page.evaluate(() => window.frictionbench.live.noteDropped({ frames: 42 }));
  await page.waitForSelector('#dropping:not([hidden])');
  assert.match(await page.textContent('#dropping'), /dropping data: \d+ frames lost/);
  await shot('bench-dropping');
});

test('the e-stop is reached from the keyboard, latches, and resets', async () => {
  await go('bench');
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live: connected');
  // Start at the top of the page: its first focusable element, the skip link (one Tab).
  await page.focus('a.skip');
  let tabs = 1;
  while ((await page.evaluate(() => document.activeElement?.id)) !== 'estop') {
    assert.ok(++tabs <= 12, 'the header e-stop is within 12 Tab presses of the top of the page');
    await page.keyboard.press('Tab');
  }
  await page.keyboard.press('Enter');
  await page.waitForFunction(async () => (await (await fetch('/api/bench')).json()).estop === true);
  await page.waitForSelector('#estop.latched');
  await page.waitForSelector('#estop-reset:not([hidden])');
  await shot('bench-estop');
  await page.click('#estop-reset');
  await page.waitForFunction(async () => (await (await fetch('/api/bench')).json()).estop === false);
  await page.waitForSelector('#estop-reset', { state: 'hidden' });
  await page.waitForSelector('#estop:not(.latched)');
  // Esc presses it from any page, as the hint beside the button says; in a text field the
  // first Esc only leaves the field.
  assert.equal((await page.textContent('#estop-key')).trim(), 'Esc');
  assert.equal(await page.getAttribute('#estop', 'aria-keyshortcuts'), 'Escape');
  await go('launch');
  await page.waitForSelector('#launch-name');
  await page.focus('#launch-name');
  await page.keyboard.press('Escape');
  assert.notEqual(await page.evaluate(() => document.activeElement?.id), 'launch-name', 'Esc left the field');
  assert.equal((await api('/api/bench')).json.estop, false, 'the first Esc in a field stops nothing');
  await page.keyboard.press('Escape');
  await page.waitForFunction(async () => (await (await fetch('/api/bench')).json()).estop === true);
  await page.waitForSelector('#estop.latched');
  const reset = await api('/api/estop/reset', { method: 'POST' });
  assert.equal(reset.status, 200, reset.text);
  await page.waitForSelector('#estop:not(.latched)');
});

test('the skip link goes to the content of the page, and the page has an icon of its own', async () => {
  await go('queue');
  await page.waitForSelector('#plan-form');
  await page.focus('a.skip');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => location.hash), '#/queue', 'still on the queue page');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
  await shot('skip-link-main');
  const icon = await page.evaluate(async () => {
    const href = document.querySelector('link[rel=icon]')?.getAttribute('href');
    const r = await fetch(href);
    return { href, status: r.status, type: r.headers.get('content-type') };
  });
  assert.deepEqual(icon, { href: 'favicon.svg', status: 200, type: 'image/svg+xml' });
});

noExternalRequests(H);
