// What every e2e file shares: one `bench serve --sim` on a fresh store and one headless Chromium
// page per file, the REST helper, screenshots under target/e2e-screenshots/, and the checks
// that the page neither threw nor reached beyond the daemon. A file calls `harness()` once at
// its top and reads `h.page`, `h.bench` inside its tests (or copies them in `ready(h)`, called
// once they exist).
import { before, after, afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startBench, tempDb, repo } from './bench.mjs';

export const shots = path.join(repo, 'target', 'e2e-screenshots');

/**
 * `opts.store`: an async function returning the store to serve (default: a fresh one);
 * `opts.mode`: the daemon's mode (default `['--sim']`; `['--lab']` for a lab view).
 */
export function harness(ready = () => {}, opts = {}) {
  const external = [];
  const h = { bench: null, browser: null, page: null, db: null, external };
  const pageErrors = [];
  before(async () => {
    mkdirSync(shots, { recursive: true });
    h.db = opts.store ? await opts.store() : tempDb();
    h.bench = await startBench({ db: h.db, mode: opts.mode });
    h.browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    const ctx = await h.browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    h.page = await ctx.newPage();
    h.page.setDefaultTimeout(20000);
    h.page.on('request', (req) => {
      const u = req.url();
      if (!u.startsWith(h.bench.url) && !u.startsWith('data:') && !u.startsWith('blob:')) external.push(u);
    });
    h.page.on('pageerror', (e) => pageErrors.push(e.message));
    ready(h);
  });
  // A page that threw fails the test that drove it.
  afterEach(() => {
    const thrown = pageErrors.splice(0);
    assert.deepEqual(thrown, [], `the page threw: ${thrown.join(' | ')}`);
  });
  after(async () => {
    await h.browser?.close();
    await h.bench?.stop();
  });
  /** REST against the daemon: `{status, json, text}`. */
  h.api = async (p, init) => {
    const r = await fetch(`${h.bench.url}${p}`, init);
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : null, text };
  };
  h.post = (p, body) => h.api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  /** Full-page screenshot `name.png`, the sticky header kept at the top. */
  h.shot = (name) => h.page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true, style: 'header.top { position: static !important; }' });
  h.go = async (hash) => {
    await h.page.goto(`${h.bench.url}/#/${hash}`);
    await h.page.waitForSelector('main[data-page]');
  };
  /** Clicks `button`, declines the question it asks, and waits until `notice` matches `said`;
   *  answers the question. */
  h.declined = async (button, notice, said) => {
    let asked = '';
    h.page.once('dialog', async (d) => {
      asked = d.message();
      await d.dismiss();
    });
    await h.page.click(button);
    await h.page.waitForFunction(([sel, re]) => new RegExp(re).test(document.querySelector(sel)?.textContent ?? ''), [notice, said.source]);
    return asked;
  };
  /** Waits until run `id` completes (failing on any other end), polling the REST API. */
  h.completed = async (id, ms = 90000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const run = (await h.api(`/api/runs/${id}`)).json;
      if (run.status === 'completed') return run;
      assert.ok(!['aborted', 'failed', 'interrupted'].includes(run.status), `run ${id} ended ${run.status}: ${run.status_reason}`);
      assert.ok(Date.now() < deadline, `run ${id} completes within ${ms} ms (it is ${run.status})`);
      await new Promise((res) => setTimeout(res, 300));
    }
  };
  return h;
}

/** The last test of a file: no request left the daemon's origin. */
export function noExternalRequests(h) {
  test('the page made no request beyond the daemon', () => {
    assert.deepEqual(h.external, [], 'every request went to the daemon');
  });
}

/** Pixels of a PNG screenshot: not background (white), and in the plot series colours. */
export async function countPixels(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const x = c.getContext('2d');
    x.drawImage(img, 0, 0);
    const d = x.getImageData(0, 0, c.width, c.height).data;
    // The plot palette (src/xyplot.ts PALETTE).
    const series = ['#1f5fbf', '#c0392b', '#2e8b57', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#b7950b', '#2c3e50', '#e84393'].map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
    let nonBackground = 0, data = 0;
    for (let i = 0; i < d.length; i += 4) {
      const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
      if (r < 245 || g < 245 || b < 245) nonBackground++;
      if (series.some(([R, G, B]) => Math.abs(r - R) + Math.abs(g - G) + Math.abs(b - B) < 40)) data++;
    }
    return { nonBackground, data, total: d.length / 4 };
  }, png.toString('base64'));
}
