// The fit form of Models & fits is built from GET /api/procedures: it offers the procedures that
// read the chosen run — by its kind, or for an imported recording by the columns it has (idim_ls
// for an imported t,x,u recording, static_curve for a sweep) —
// the chosen procedure's options as typed fields, and held-out runs whose scores it shows as the
// service answers them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, noExternalRequests } from './harness.mjs';

const h = harness();

/** A bare inertia with Coulomb + viscous friction driven by `u(t)`: `t,x,u` every 1 ms for `T` s. */
function record(u, T = 20) {
  const [J, fc, fv, dt, sub] = [0.05, 0.3, 0.1, 1e-3, 20];
  let [x, v] = [0, 0];
  const rows = ['t,x,u'];
  for (let k = 0; k * dt <= T; k++) {
    const t = k * dt;
    rows.push(`${t.toFixed(3)},${x.toPrecision(12)},${u(t).toPrecision(12)}`);
    for (let i = 0; i < sub; i++) {
      const s = t + (i * dt) / sub;
      const drive = u(s);
      // At rest, friction holds up to fc; moving, it opposes the motion.
      if (v === 0 && Math.abs(drive) <= fc) continue;
      const dir = v !== 0 ? Math.sign(v) : Math.sign(drive);
      const vNext = v + ((drive - fc * dir - fv * v) / J) * (dt / sub);
      // A reversal through zero stops first (then sticks or breaks away on the next step).
      const next = Math.sign(vNext) === -dir ? 0 : vNext;
      x += 0.5 * (v + next) * (dt / sub);
      v = next;
    }
  }
  return rows.join('\n') + '\n';
}

const estimation = (t) => 1.0 * Math.sin(2 * Math.PI * 0.4 * t) + 0.5 * Math.sin(2 * Math.PI * 1.3 * t + 1);
const heldOut = (t) => 0.8 * Math.sin(2 * Math.PI * 0.7 * t) + 0.6 * Math.sin(2 * Math.PI * 2.1 * t + 0.3);

async function importCsv(name, csv) {
  const r = await h.api(`/api/runs/import?file=${encodeURIComponent(name + '.csv')}&name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: csv });
  assert.equal(r.status, 201, r.text);
  return r.json.run_id ?? r.json.id;
}

/** The procedures offered once the list answers run `id` and `model`. */
async function offered(page, id, model) {
  await page.waitForSelector(`#fit-procedure[data-run="${id}"][data-model="${model}"]`);
  return page.$$eval('#fit-procedure option', (os) => os.map((o) => o.value));
}

let imported, held, sweep;

/** The Models page with coulomb_viscous by idim_ls chosen on the imported estimation run. */
async function idimOnImported(page) {
  await h.go('models');
  await page.waitForSelector('#fit-form');
  await page.selectOption('#fit-model', 'coulomb_viscous');
  await page.selectOption('#fit-run', String(imported));
  await offered(page, imported, 'coulomb_viscous');
  await page.selectOption('#fit-procedure', 'idim_ls');
}

test('fit form: a sweep run is offered static_curve, an imported t,x,u run idim_ls, as the registry says', async () => {
  const { page } = h;
  imported = await importCsv('e2e fit: estimation', record(estimation));
  held = await importCsv('e2e fit: held out', record(heldOut));
  const s = await h.post('/api/runs', { kind: 'constant_velocity_sweep', name: 'e2e fit: sweep', params: { velocities: [0.3, 0.6], repeats: 1, settle_s: 0.3, measure_s: 0.5 } });
  assert.equal(s.status, 201, s.text);
  sweep = s.json.id;
  await h.completed(sweep);
  const procs = (await h.api('/api/procedures')).json;
  const fits = (p, model) => p.models.includes(model) || p.models.includes('*');
  const expected = (kind, model) => procs.filter((p) => p.run_kinds.includes(kind) && fits(p, model)).map((p) => p.id);
  // An imported recording is read by the procedures whose columns it has.
  const fromColumns = (cols, model) => procs.filter((p) => p.columns.every((c) => cols.includes(c)) && fits(p, model)).map((p) => p.id);
  await h.go('models');
  await page.waitForSelector('#fit-form');
  await page.selectOption('#fit-model', 'coulomb_viscous');
  await page.selectOption('#fit-run', String(sweep));
  const forSweep = await offered(page, sweep, 'coulomb_viscous');
  assert.deepEqual(forSweep, expected('constant_velocity_sweep', 'coulomb_viscous'));
  assert.ok(forSweep.includes('static_curve') && !forSweep.includes('idim_ls'), forSweep.join());
  await page.selectOption('#fit-run', String(imported));
  const forImported = await offered(page, imported, 'coulomb_viscous');
  assert.deepEqual(forImported, fromColumns(['t', 'x', 'u'], 'coulomb_viscous'));
  assert.ok(forImported.includes('idim_ls') && !forImported.includes('static_curve'), forImported.join());
  // The options of idim_ls as typed fields: a checkbox, a number with its unit, from the schema.
  await page.selectOption('#fit-procedure', 'idim_ls');
  assert.equal(await page.getAttribute('#fit-opt-asymmetric', 'type'), 'checkbox');
  assert.equal(await page.getAttribute('#fit-opt-j', 'type'), 'number');
  assert.match(await page.textContent('[data-option="j"] label'), /^j \[kg m² or kg\]$/);
  await page.selectOption('#fit-procedure', 'power_rls');
  assert.deepEqual(await page.$$eval('#fit-opt-eta option', (os) => os.map((o) => o.value)), ['', 'v2', 'one', 'threshold']);
  await h.shot('models-fit-form-imported');
});

test('fit form: idim_ls with a known inertia typed in its field and a held-out run shows the service\'s validation numbers', async () => {
  const { page } = h;
  await idimOnImported(page);
  await page.fill('#fit-opt-j', '0.05');
  await page.selectOption('#fit-validate', String(held));
  await page.click('#fit-form button[type=submit]');
  await page.waitForFunction(() => !/^fitting/.test(document.getElementById('fit-notice')?.textContent ?? 'fitting'), null, { timeout: 60000 });
  assert.match(await page.textContent('#fit-notice'), /^saved as parameter set #\d+$/);
  await page.waitForSelector('[data-testid="fit-validation"] tbody tr');
  // The set saved with the option the form set.
  const setId = Number((await page.textContent('#fit-notice')).match(/parameter set #(\d+)/)?.[1]);
  const set = (await h.api(`/api/parameter-sets/${setId}`)).json;
  assert.equal(set.provenance.given.j, 0.05, JSON.stringify(set.provenance));
  assert.ok(Math.abs(set.params.fc - 0.3) < 0.01 && Math.abs(set.params.fv - 0.1) < 0.005, JSON.stringify(set.params));
  // The same fit over REST: the numbers on the page are the service's.
  const rest = await h.post('/api/fits', { model: 'coulomb_viscous', procedure: 'idim_ls', run: imported, given: { j: 0.05 }, validate: [held] });
  assert.equal(rest.status, 201, rest.text);
  const [v] = rest.json.report.validation;
  const missing = await h.post('/api/fits', { model: 'coulomb_viscous', procedure: 'idim_ls', run: imported, validate: [999999] });
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.json.field, 'validate');
  assert.equal(v.record, `run ${held}`);
  assert.ok(v.n > 100 && v.rel_error_pct < 5, JSON.stringify(v));
  const row = await page.$$eval('[data-testid="fit-validation"] thead th, [data-testid="fit-validation"] tbody td', (cs) => cs.map((c) => c.textContent.trim()));
  const cells = Object.fromEntries(row.slice(0, 6).map((k, i) => [k, row[6 + i]]));
  const four = (x) => Number(x.toPrecision(4));
  assert.equal(cells.record, v.record);
  assert.equal(Number(cells.rms), four(v.rms));
  assert.equal(Number(cells.rel_error_pct), four(v.rel_error_pct));
  assert.equal(Number(cells.r2), four(v.r2));
  assert.equal(Number(cells.n), v.n);
  await h.shot('models-fit-held-out');
});

test('fit form: a wrong value in an option is refused naming the key and the expected type', async () => {
  const { page } = h;
  await idimOnImported(page);
  await page.fill('#fit-given', '{"asymmetric": "yes"}');
  await page.click('#fit-form button[type=submit]');
  await page.waitForFunction(() => /is refused/.test(document.getElementById('fit-notice')?.textContent ?? ''));
  const text = await page.textContent('#fit-notice');
  assert.match(text, /given\.asymmetric is refused: invalid type: string "yes", expected a boolean/);
  assert.doesNotMatch(text, /NaN/);
  await h.shot('models-fit-option-refused');
});

noExternalRequests(h);
