// Issue 41 item 3, no motion a person did not ask for, on Queue & schedule: the plan form shows
// each plan's duration and end time as the service computes them (`POST /api/schedule/check`),
// and asks, as Launch does, before scheduling a plan longer than an hour; declined, nothing is
// scheduled. (A start in the past, asked and refused over REST: run-control.test.mjs "schedule an item".)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, noExternalRequests } from './harness.mjs';

const h = harness();

/** The dashboard's duration (src/dom.ts `duration`), to read the service's seconds as the page must. */
function duration(s) {
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - 60 * m)} s`;
  const hr = Math.floor(m / 60);
  return `${hr} h ${m - 60 * hr} min`;
}

test('plan form: the duration and end time the service computes; a plan over an hour asks first, declined nothing is scheduled', async () => {
  const { page } = h;
  await h.go('queue');
  await page.waitForSelector('#plan-form');
  // The form opens on tonight 22:00 (tomorrow's once past) and the sweep with its defaults: the
  // paper's full sweep, hours of bench time.
  const kinds = (await h.api('/api/experiments/kinds')).json;
  const sweep = kinds.find((k) => k.kind === 'constant_velocity_sweep');
  assert.ok(sweep.estimate_s > 3600, `the default sweep takes over an hour (${sweep.estimate_s} s)`);
  const checked = page.waitForResponse((r) => r.url().endsWith('/api/schedule/check') && r.request().method() === 'POST');
  await page.fill('#plan-priority', '1');
  const p = await (await checked).json();
  assert.equal(p.runs, 1);
  assert.equal(p.past, false);
  assert.ok(Math.abs(p.estimate_s - sweep.estimate_s) <= 1, `the plan's estimate ${p.estimate_s} s is the kind's ${sweep.estimate_s} s`);
  // The preview: the service's duration, start and end, in this browser's local time.
  const [from, to] = await page.evaluate((p) => [new Date(p.run_at).toLocaleString(), new Date(p.ends_at).toLocaleString()], p);
  await page.waitForFunction((want) => document.getElementById('plan-preview')?.textContent === want, `1 run, about ${duration(p.estimate_s)}: from ${from} to ${to}.`);
  assert.equal(Date.parse(p.ends_at) - Date.parse(p.run_at), Math.round(p.estimate_s * 1000), 'ends_at is run_at plus the estimate');
  await h.shot('schedule-long-preview');

  // Scheduling it asks first, naming the duration and the end; declined, nothing is scheduled.
  const before = (await h.api('/api/schedule')).json.length;
  const asked = await h.declined('#plan-submit', '#queue-notice', /not confirmed/);
  assert.equal(asked, `It runs for about ${duration(p.estimate_s)}, until ${to}. Schedule it?`);
  assert.equal((await h.api('/api/schedule')).json.length, before, 'declined: nothing scheduled');

  // Accepted, it is scheduled at the time the form showed.
  page.once('dialog', (d) => d.accept());
  await page.click('#plan-submit');
  await page.waitForSelector('#schedule-table tr[data-schedule-id]');
  const list = (await h.api('/api/schedule')).json;
  assert.equal(list.length, before + 1);
  assert.equal(Date.parse(list.at(-1).run_at), Date.parse(p.run_at), 'scheduled at the previewed start');
  await h.shot('schedule-long-scheduled');
  assert.equal((await h.api(`/api/schedule/${list.at(-1).id}`, { method: 'DELETE' })).status < 300, true);
});

noExternalRequests(h);
