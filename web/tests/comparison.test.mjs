// A model comparison on the dashboard, read through the service's types (`Compared`, the answer
// of POST /api/comparisons; `StoredComparison`, a run's `comparisons`): the Models page's form
// shows the answer, the run page the stored comparison, each with its id, its runs and the
// models in the stored table's rank order with its validation MSE; the run page's device
// profiles (`DeviceProfiles`) are the texts the record holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, noExternalRequests } from './harness.mjs';

const h = harness();

/** The comparison on screen under `root`: its caption and, per row, model, rank and val. MSE. */
async function shown(root) {
  await h.page.waitForSelector(`${root} .comparison-table`);
  const caption = await h.page.textContent(`${root} .comparison > p`);
  const rows = await h.page.$$eval(`${root} .comparison-table tbody tr`, (trs) =>
    trs.map((tr) => ({ model: tr.getAttribute('data-model'), rank: tr.cells[0].textContent, mse: tr.cells[7].textContent })),
  );
  return { caption, rows };
}

/** What the table must show of the stored `c`: its rows in rank order, the MSE as `fmt` prints it. */
function expected(c) {
  const fmt = (x) => (x === null ? '—' : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5 ? x.toExponential(3) : String(Number(x.toPrecision(4))));
  return [...c.table.rows].sort((a, b) => a.rank - b.rank).map((r) => ({ model: r.model, rank: String(r.rank), mse: fmt(r.validation.all) }));
}

test('comparison: the Models page shows the answer, the run page the stored comparison, both with its id and runs', async () => {
  const { page } = h;
  const s = await h.post('/api/runs', { kind: 'constant_velocity_sweep', name: 'e2e compare: sweep', params: { velocities: [0.3, 0.6, 1.0], repeats: 1, settle_s: 0.3, measure_s: 0.5 } });
  assert.equal(s.status, 201, s.text);
  const run = s.json.id;
  await h.completed(run);
  await h.go('models');
  await page.waitForSelector('#compare-form');
  await page.selectOption('#cmp-estimate', String(run));
  await page.selectOption('#cmp-validate', String(run));
  await page.selectOption('#cmp-models', ['coulomb_viscous', 'stribeck_exp']);
  await page.click('#compare-form button[type=submit]');
  const answered = await shown('#compare-form');
  const stored = (await h.api(`/api/runs/${run}`)).json.comparisons;
  assert.equal(stored.length, 1, JSON.stringify(stored));
  const c = stored[0];
  const caption = `Comparison #${c.id}: estimated on runs #${run}, validated on runs #${run}; mean squared ${c.table.residual}, ranked by validation.`;
  assert.equal(answered.caption, caption);
  assert.deepEqual(answered.rows, expected(c));
  assert.match(await page.textContent('#compare-form [role=status], #compare-form .notice'), new RegExp(`comparison ${c.id} stored`));
  await h.go(`runs/${run}`);
  const listed = await shown('#run-comparisons');
  assert.equal(listed.caption, caption);
  assert.deepEqual(listed.rows, expected(c));
  // The same record's device profiles (`DeviceProfiles`): each device's TOML text as stored.
  const profiles = (await h.api(`/api/runs/${run}`)).json.device_profiles;
  assert.ok(profiles.drive.includes('[[signal]]'), JSON.stringify(profiles));
  await page.click('.device-profiles summary');
  const blocks = await page.$$eval('.device-profiles [data-device]', (ds) => ds.map((d) => [d.getAttribute('data-device'), d.querySelector('pre').textContent]));
  assert.deepEqual(blocks, Object.entries(profiles));
});

noExternalRequests(h);
