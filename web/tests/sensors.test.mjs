// The Sensors page on the simulated bench read through the DAQ (sim-daq.toml): a sensor without
// a record says how to add one and shows its runs' zeros; recorded calibrations show the current
// one, its history and a due-soon or overdue warning. Screenshots: target/e2e-screenshots/
// sensors-none.png, sensors-overdue.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { harness, noExternalRequests } from './harness.mjs';
import { benchBin, tempDb, repo } from './bench.mjs';

const config = path.join(repo, 'bench-daemon', 'config', 'sim-daq.toml');
const SENSOR = 'daq.measured_torque';
let db;

/** `bench ARGS --sim --config sim-daq.toml --db DB`. */
const bench = (...args) => execFileSync(benchBin(), [...args, '--sim', '--config', config, '--db', db], { encoding: 'utf8' });

/** The UTC day `days` from today, as YYYY-MM-DD. */
const day = (days) => new Date(Date.now() + days * 86400e3).toISOString().slice(0, 10);

const calibrate = (certificate, sensitivity, offset, calibrated, due) =>
  bench('sensors', 'calibrate', '--sensor', SENSOR, '--sensitivity', String(sensitivity), '--offset', String(offset), '--certificate', certificate, '--calibrated', calibrated, '--due', due, '--by', 'e2e');

// Two quick runs before the daemon starts, each measuring the input's zero.
const h = harness(() => {}, {
  mode: ['--sim', '--config', config],
  store: async () => {
    db = tempDb();
    const spec = path.join(path.dirname(db), 'sweep.json');
    writeFileSync(spec, JSON.stringify({ kind: 'constant_velocity_sweep', name: 'e2e sensors', params: { velocities: [0.5], directions: 'positive', settle_s: 0.3, measure_s: 0.4, repeats: 1 } }));
    for (let k = 0; k < 2; k++) bench('run', spec);
    return db;
  },
});

/** Opens the Sensors page afresh (from another page: the same hash would not route again). */
const open = async () => {
  await h.go('bench');
  await h.go('sensors');
};

const card = `section.sensor[data-sensor="${SENSOR}"]`;
const cells = (sel) => h.page.$$eval(`${card} ${sel} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));

test('sensors: no record says how to add one; the zero of each run and its drift', async () => {
  const api = (await h.api('/api/sensors')).json;
  const s = api.sensors.find((x) => x.name === SENSOR);
  assert.equal(s.calibration, null);
  assert.equal(s.zeros.length, 2, 'each run measured its zero');
  await open();
  await h.page.waitForSelector(card);
  const how = await h.page.textContent(`${card} .no-calibration`);
  assert.match(how, /No calibration on record/);
  assert.match(how, /bench sensors calibrate --sensor daq\.measured_torque --sensitivity <N m\/V> --offset <V>/);
  assert.equal(await h.page.$(`${card} .due`), null, 'no due date without a record');
  // The zeros as the API gives them, newest first, each linking to its run.
  const zeros = await cells('table.zeros');
  assert.deepEqual(zeros.map((r) => r[0]), s.zeros.map((z) => `#${z.run_id}`));
  assert.deepEqual(zeros.map((r) => Number(r[1])), s.zeros.map((z) => Number(z.zero.toPrecision(4))));
  const drift = await h.page.textContent(`${card} .zeros table.kv`);
  assert.match(drift, /Runs\s*2/);
  assert.match(drift, / V\/day/);
  assert.match(drift, /Spread.* V/);
  await h.shot('sensors-none');
});

test('sensors: the current calibration, its history and the overdue warning', async () => {
  calibrate('DKD-K-100', 0.48, 0.001, day(-800), day(-400));
  calibrate('DKD-K-200', 0.5, 0.002, day(-400), day(-3));
  await open();
  await h.page.waitForSelector(`${card} .calibration`);
  const warn = await h.page.textContent(`${card} p.due`);
  assert.match(warn, /Calibration OVERDUE by 3 days/);
  assert.match(warn, /runs are refused/);
  assert.equal(await h.page.getAttribute(`${card} p.due`, 'role'), 'alert');
  const kv = await h.page.$$eval(`${card} .calibration table.kv tr`, (trs) => Object.fromEntries(trs.map((tr) => [tr.querySelector('th').textContent, tr.querySelector('td').textContent])));
  assert.deepEqual(
    { s: kv.Sensitivity, o: kv.Offset, c: kv.Certificate, cal: kv.Calibrated, due: kv.Due },
    { s: '0.5 N m/V', o: '0.002 V', c: 'DKD-K-200', cal: day(-400), due: day(-3) },
  );
  const history = await cells('table.history');
  assert.deepEqual(history.map((r) => r[2]), ['DKD-K-200', 'DKD-K-100'], 'newest first');
  assert.deepEqual(history[1].slice(0, 2), [day(-800), day(-400)]);
  assert.equal(await h.page.$(`${card} .no-calibration`), null, 'no how-to once a record exists');
  await h.shot('sensors-overdue');
  // A new certificate due in 10 days: due soon, a warning, no alert.
  calibrate('DKD-K-300', 0.5, 0.002, day(-1), day(10));
  await open();
  await h.page.waitForSelector(`${card} .calibration`);
  assert.match(await h.page.textContent(`${card} p.due.soon`), /Calibration due soon: in 10 days/);
  assert.equal(await h.page.$(`${card} p.due.overdue`), null);
});

noExternalRequests(h);
