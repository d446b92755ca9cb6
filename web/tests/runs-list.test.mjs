// The runs list refreshes in place: rows are updated, not rebuilt, so keyboard focus stays
// where the person put it while runs start, progress and finish.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, noExternalRequests } from './harness.mjs';

const h = harness();
const short = (name) => ({ kind: 'presliding', name, params: { parts: ['reversals'], reversals_rad: [0.0002, -0.0002], reversals_rate_rad_s: 0.0004 } });

test('runs list: a focused link keeps focus while a new run appears, runs and completes', async () => {
  const { page } = h;
  const a = await h.post('/api/runs', short('e2e list: first'));
  assert.equal(a.status, 201, a.text);
  await h.completed(a.json.id);
  await h.go('runs');
  const rowA = `#runs-table tr[data-run-id="${a.json.id}"]`;
  await page.waitForSelector(`${rowA}[data-status="completed"]`);
  // Keyboard focus on the first run's link; the nodes marked to tell "kept" from "rebuilt".
  await page.focus(`${rowA} a`);
  await page.$eval(`${rowA} a`, (el) => { el.dataset.mark = 'focused'; });
  const refreshes = async () => Number(await page.getAttribute('#runs-list', 'data-refreshes'));
  const before = await refreshes();
  const b = await h.post('/api/runs', short('e2e list: second'));
  assert.equal(b.status, 201, b.text);
  const rowB = `#runs-table tr[data-run-id="${b.json.id}"]`;
  await page.waitForSelector(rowB);
  await page.$eval(rowB, (el) => { el.dataset.mark = 'first-seen'; });
  await page.waitForSelector(`${rowB}[data-status="completed"]`, { timeout: 60000 });
  // Two more refreshes after the end, so a rebuild would have had its chance.
  const after = await refreshes();
  await page.waitForFunction((n) => Number(document.getElementById('runs-list')?.dataset.refreshes) >= n + 2, after);
  assert.ok(after > before, `the list refreshed (${before} → ${after})`);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.mark ?? document.activeElement?.tagName), 'focused', 'focus stayed on the link');
  assert.equal(await page.getAttribute(rowB, 'data-mark'), 'first-seen', 'the new run\'s row was updated in place');
  assert.equal(await page.textContent(`${rowB} td.status`), 'completed');
  assert.match(await page.textContent('#runs-total'), /^2 runs match/);
  // The newest run first: the new row went in above the focused one.
  const order = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.runId)));
  assert.deepEqual(order, [b.json.id, a.json.id]);
  // Enter on the still-focused link opens its run.
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => location.hash === `#/runs/${id}`, a.json.id);
  await h.go('runs');
  await page.waitForSelector(rowA);
  await h.shot('runs-list-in-place');
});

test('runs list: Search asks the server (all runs, the right count), by name word and #id', async () => {
  const { page } = h;
  const c = await h.post('/api/runs', short('e2e list: needle-zz'));
  assert.equal(c.status, 201, c.text);
  await h.completed(c.json.id);
  await h.go('runs');
  await page.fill('#runs-text', 'NEEDLE-zz');
  await page.click('form[role=search] button[type=submit]');
  await page.waitForFunction(() => /^1 runs match/.test(document.getElementById('runs-total')?.textContent ?? ''));
  const shown = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.runId)));
  assert.deepEqual(shown, [c.json.id]);
  // The same answer over REST: the count is the server's, not the rows on screen.
  const rest = await h.api(`/api/runs?q=needle-zz`);
  assert.equal(rest.json.total, 1);
  await page.fill('#runs-text', `#${c.json.id}`);
  await page.click('form[role=search] button[type=submit]');
  await page.waitForFunction(() => /^1 runs match/.test(document.getElementById('runs-total')?.textContent ?? ''));
  await h.shot('runs-search-server');
});

noExternalRequests(h);
