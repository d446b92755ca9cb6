// The Fleet page of a lab view: two benches heartbeat into one lab store (`[lab]` in their
// bench.toml), one running a run, one idle; the page shows each one's state and run, and marks
// the running one stale once it stops reporting. Screenshot: target/e2e-screenshots/fleet.png.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { harness, noExternalRequests } from './harness.mjs';
import { startBench, benchBin, tempDb, repo } from './bench.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'fb-fleet-'));
const lab = path.join(dir, 'lab.db');
const simToml = readFileSync(path.join(repo, 'bench-daemon', 'config', 'sim.toml'), 'utf8');
const others = [];

/** A bench.toml: sim.toml's devices at `tcp`, named `benchId`, heartbeating to the lab store. */
function benchToml(name, benchId, tcp) {
  const file = path.join(dir, `${name}.toml`);
  const id = benchId ? `bench_id = "${benchId}"\n` : '';
  writeFileSync(file, `${id}${simToml.replaceAll('127.0.0.1:5020', tcp)}\n[lab]\nurl = "${lab}"\nheartbeat_s = 0.3\n`);
  return file;
}

/** `bench sim --tcp 127.0.0.1:0`: simulated devices over Modbus TCP; resolves with their address. */
function startSim() {
  const proc = spawn(benchBin(), ['sim', '--tcp', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'ignore'] });
  others.push({ stop: async () => proc.kill('SIGTERM') });
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', (line) => resolve(JSON.parse(line).tcp));
    proc.once('exit', (code) => reject(new Error(`bench sim exited with ${code}`)));
  });
}

let running;
// The lab store is the running bench's own (`--sim`: bench `sim`), so it exists before the lab
// view opens it; `rig-idle` runs on its own simulated devices and reports there too.
const h = harness(() => {}, {
  mode: ['--lab'],
  store: async () => {
    running = await startBench({ db: lab, mode: ['--sim', '--config', benchToml('running', null, '127.0.0.1:5020')] });
    const tcp = await startSim();
    others.push(await startBench({ db: tempDb(), mode: ['--config', benchToml('idle', 'rig-idle', tcp)] }));
    return lab;
  },
});
after(async () => {
  await running?.stop();
  for (const o of others) await o.stop();
});

const row = (bench) => `#fleet-table tr[data-bench="${bench}"]`;

test('fleet: each bench\'s state and run, and a stale mark once one stops reporting', async () => {
  const { page } = h;
  const spec = { kind: 'constant_velocity_sweep', name: 'e2e fleet: long sweep', params: { velocities: [0.2], directions: 'positive', settle_s: 0.3, measure_s: 60, repeats: 1 } };
  const r = await fetch(`${running.url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  assert.equal(r.status, 201, await r.text());
  await h.go('fleet');
  // In a lab view the nav offers the page.
  await page.waitForSelector('nav a#nav-fleet:not([hidden])');
  await page.waitForSelector(`${row('sim')}[data-state="running"]`);
  assert.match(await page.textContent(`${row('sim')} td.run`), /e2e fleet: long sweep/);
  await page.waitForSelector(`${row('rig-idle')}[data-state="idle"][data-stale="false"]`);
  assert.equal(await page.textContent(`${row('rig-idle')} td.state`), 'idle');
  assert.equal(await page.$(`${row('sim')} .stale-mark`), null, 'a reporting bench is not stale');

  // The running bench goes away (its run aborted): within 3 heartbeats its row is stale.
  await running.stop();
  await page.waitForSelector(`${row('sim')}[data-stale="true"] .stale-mark`);
  assert.match(await page.textContent(`${row('sim')} td.heartbeat`), /STALE/);
  await page.waitForSelector(`${row('rig-idle')}[data-stale="false"]`);
  await h.shot('fleet');

  // Each row links to that bench's runs in the lab view.
  await page.click(`${row('sim')} a`);
  await page.waitForFunction(() => location.hash === '#/runs?bench=sim');
  assert.equal(await page.inputValue('#runs-bench'), 'sim');
  await page.waitForSelector('#runs-table tr[data-run-id]');
});

noExternalRequests(h);
