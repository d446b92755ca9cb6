// The Launch page's first screen: the shipped quick specs as presets with their durations,
// velocities as a list or "from, to, step", labels with the unit apart from the name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { harness, noExternalRequests } from './harness.mjs';
import { repo } from './bench.mjs';

const h = harness();
const spec = (file) => JSON.parse(readFileSync(path.join(repo, 'experiments', 'specs', file), 'utf8'));

test('launch opens on the quick sweep of experiments/specs, every shipped spec offered with its duration', async () => {
  const { page } = h;
  await h.go('launch');
  await page.waitForSelector('#launch-form');
  const quick = spec('constant_velocity_sweep.json');
  // The form holds the quick sweep, not the kind's defaults (the paper's 5 h sweep).
  assert.equal(await page.inputValue('#launch-preset'), 'constant_velocity_sweep.json');
  assert.equal(await page.inputValue('#launch-kind'), 'constant_velocity_sweep');
  assert.equal(await page.inputValue('#launch-name'), quick.name);
  assert.equal(await page.inputValue('#launch-param-velocities'), quick.params.velocities.join(', '));
  await page.waitForFunction(() => /^Estimated duration 32\.0 s/.test(document.getElementById('launch-estimate')?.textContent ?? ''));
  // Every shipped spec is a preset, and each shows the daemon's own estimate of its duration.
  await page.waitForFunction(() => [...document.querySelectorAll('#launch-preset option[data-index]')].every((o) => o.dataset.estimateS));
  const options = await page.$$eval('#launch-preset option[data-index]', (os) => os.map((o) => ({ file: o.value, text: o.textContent, est: Number(o.dataset.estimateS) })));
  const shipped = readdirSync(path.join(repo, 'experiments', 'specs')).filter((f) => f.endsWith('.json'));
  assert.deepEqual(options.map((o) => o.file).sort(), shipped.sort());
  for (const o of options) {
    const direct = await h.post('/api/experiments/check', spec(o.file));
    assert.equal(direct.status, 200, direct.text);
    assert.equal(o.est, direct.json.estimate_s, o.file);
    assert.match(o.text, /· \d/, `${o.file} shows its duration: ${o.text}`);
  }
  const first = options.find((o) => o.file === 'constant_velocity_sweep.json');
  assert.match(first.text, /^quick Stribeck sweep \(constant_velocity_sweep\) · 32\.0 s$/);
  await h.shot('launch-presets');
  // Another preset fills the form with its kind and parameters.
  await page.selectOption('#launch-preset', 'torque_ramp.json');
  assert.equal(await page.inputValue('#launch-kind'), 'torque_ramp');
  assert.equal(await page.inputValue('#launch-param-rates_nm_s'), spec('torque_ramp.json').params.rates_nm_s.join(', '));
  // Picking a kind by hand leaves the presets.
  await page.selectOption('#launch-kind', 'prbs');
  assert.equal(await page.inputValue('#launch-preset'), '');
});

test('labels name the parameter; its unit stands apart, beside the input', async () => {
  const { page } = h;
  await h.go('launch');
  await page.waitForSelector('#launch-form');
  await page.selectOption('#launch-preset', 'presliding.json');
  const label = async (p) => (await page.textContent(`label[for="launch-param-${p}"]`)).trim();
  assert.equal(await label('ramp_rate_rad_s'), 'ramp rate');
  assert.equal(await label('sine_amplitude_nm'), 'sine amplitude');
  assert.equal(await label('reversals_rad'), 'reversals');
  assert.equal(await page.textContent('#launch-param-ramp_rate_rad_s-unit'), 'rad/s');
  assert.equal(await page.textContent('#launch-param-sine_amplitude_nm-unit'), 'N m');
  // The key the spec uses stays on screen (the help line), and the unit is read with the input.
  assert.match(await page.textContent('#launch-param-ramp_rate_rad_s-help'), /^ramp_rate_rad_s /);
  assert.match(await page.getAttribute('#launch-param-ramp_rate_rad_s', 'aria-describedby'), /launch-param-ramp_rate_rad_s-unit/);
  await h.shot('launch-labels');
});

test('velocities as "from, to, step": sent as a range, estimated; a bad step named beside the field', async () => {
  const { page } = h;
  await h.go('launch');
  await page.waitForSelector('#launch-form');
  await page.selectOption('#launch-preset', 'constant_velocity_sweep.json');
  assert.equal(await page.getAttribute('#launch-form .list-or-range', 'data-mode'), 'list');
  await page.fill('#launch-param-velocities-from', '0.1');
  await page.fill('#launch-param-velocities-to', '1');
  await page.fill('#launch-param-velocities-step', '0.1');
  assert.equal(await page.getAttribute('#launch-form .list-or-range', 'data-mode'), 'range');
  assert.equal(await page.inputValue('#launch-param-velocities'), '', 'the list gives way to the range');
  assert.equal(await page.textContent('#launch-param-velocities-count'), '10 values from 0.1 to at most 1');
  // 10 velocities × 2 directions × (1 s settle + 1 s measure) = 40 s, as the server expands the range.
  const direct = await h.post('/api/experiments/check', { ...spec('constant_velocity_sweep.json'), params: { ...spec('constant_velocity_sweep.json').params, velocities: { from: 0.1, to: 1, step: 0.1 } } });
  assert.equal(direct.status, 200, direct.text);
  assert.equal(direct.json.estimate_s, 40);
  await page.waitForFunction((s) => document.getElementById('launch-estimate')?.textContent?.startsWith(`Estimated duration ${s}`), `40.0 s (at most 40.0 s), ${direct.json.segments} segments`)
    .catch(async () => assert.fail(`estimate: ${await page.textContent('#launch-estimate')} (the server: ${direct.json.estimate_s} s)`));
  await h.shot('launch-range');
  // A step of 0: the server's message, beside the velocities.
  await page.fill('#launch-param-velocities-step', '0');
  await page.waitForFunction(() => /^Cannot run as set: .*step/.test(document.getElementById('launch-estimate')?.textContent ?? ''));
  assert.equal(await page.getAttribute('#launch-param-velocities', 'aria-invalid'), 'true');
  assert.match(await page.textContent('#launch-err-velocities'), /step/);
  // Typed back as a list, the list is what counts.
  await page.fill('#launch-param-velocities', '0.2, 0.4');
  assert.equal(await page.getAttribute('#launch-form .list-or-range', 'data-mode'), 'list');
  assert.equal(await page.inputValue('#launch-param-velocities-step'), '');
  await page.waitForFunction(() => /^Estimated duration 8\.0 s/.test(document.getElementById('launch-estimate')?.textContent ?? ''));
});

noExternalRequests(h);
