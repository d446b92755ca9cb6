// Issue 41 item 2, a report that hides nothing: a campaign's report (`GET
// /api/campaigns/{id}/report`, the page the dashboard's campaign view frames) shows both
// directions of every fitted parameter with its standard error and interval, MSE in squared
// units, round axis ticks with SI prefixes, every plot's measured range with the stick-slip
// points drawn hollow, and the answer's caveats in the headline box; each value equal to what
// the campaign's record in the API holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { harness, noExternalRequests, shots } from './harness.mjs';
import { benchBin } from './bench.mjs';

const h = harness();
let campaign;

/** A number as the report prints it (4 decimals, or 5 significant digits in e-notation). */
function near(cell, want, what) {
  const got = Number(String(cell).replace('−', '-'));
  assert.ok(Number.isFinite(got), `${what}: the report shows “${cell}”, the API ${want}`);
  assert.ok(Math.abs(got - want) <= 5.01e-5 + 1e-4 * Math.abs(want), `${what}: the report shows ${cell}, the API ${want}`);
}

/** `x` as Rust's `{:.3e}` prints it (`5.747e-4`, `1.000e0`). */
const exp3 = (x) => x.toExponential(3).replace('e+', 'e');

const PREFIX = { n: 1e-9, µ: 1e-6, m: 1e-3, '': 1, k: 1e3 };

/** One axis's tick labels: plain numbers (no e-notation) with an optional SI-prefixed unit, on
 * a round step (1, 2, 2.5 or 5 × 10ⁿ, every tick a multiple of it) or, on a log axis, powers of ten. */
function roundTicks(ticks, where) {
  assert.ok(ticks.length >= 2, `${where}: ticks ${ticks}`);
  const xs = ticks.map((t) => {
    const m = t.match(/^([−-]?\d+(?:\.\d+)?)(?: ([nµmk]?)(?:rad|N|m|s|Hz|N m|rad\/s|N m\/s|m\/s|N\/s)?)?$/);
    assert.ok(m, `${where}: tick “${t}” is a plain number with an optional SI-prefixed unit`);
    return Number(m[1].replace('−', '-')) * PREFIX[m[2] ?? ''];
  });
  const log = xs.every((x) => x > 0 && Math.abs(Math.log10(x) - Math.round(Math.log10(x))) < 1e-9);
  if (log && xs.length > 2) return;
  const step = xs[1] - xs[0];
  const mant = step / 10 ** Math.floor(Math.log10(step));
  assert.ok([1, 2, 2.5, 5].some((r) => Math.abs(mant - r) < 1e-6), `${where}: step ${step} of ${ticks.join(' | ')} is round`);
  for (const x of xs) assert.ok(Math.abs(x / step - Math.round(x / step)) < 1e-6, `${where}: tick ${x} is a multiple of ${step} (${ticks.join(' | ')})`);
}

/** The report's page, its campaign started on this daemon's store (a few seconds of wall time). */
async function openReport() {
  if (!campaign) {
    // Two models, one of which cannot be supported by what the sweep measured: caveats to show.
    const out = execFileSync(benchBin(), ['characterise', '--sim', '--models', 'coulomb_viscous,stribeck_exp', '--db', h.db], { encoding: 'utf8' });
    const id = Number(out.split('\n')[0].replace('campaign ', ''));
    assert.ok(id > 0, out);
    campaign = (await h.api(`/api/campaigns/${id}`)).json;
  }
  await h.page.goto(`${h.bench.url}/api/campaigns/${campaign.id}/report`);
  await h.page.waitForSelector('#answer');
}

test('report: the answer and each of its caveats in the headline box, as the API words them', async () => {
  await openReport();
  const a = campaign.answer;
  assert.equal(await h.page.textContent('#answer > p'), a.text);
  assert.ok(a.caveats.length >= 2, `caveats to show: ${JSON.stringify(a.caveats)}`);
  assert.deepEqual(await h.page.$$eval('#answer .caveats li', (li) => li.map((l) => l.textContent)), a.caveats);
  assert.match(await h.page.getAttribute('#answer', 'class'), a.adequate ? /\badequate\b/ : /\binadequate\b/);
  await h.page.locator('#answer').screenshot({ path: path.join(shots, 'report-answer.png') });
});

test('report: every parameter in both directions with its standard error and 95 % interval, equal to the fit the API stored', async () => {
  await openReport();
  const tables = await h.page.$$eval('h3', (hs) =>
    hs.map((h3) => {
      let t = h3.nextElementSibling;
      while (t && t.tagName !== 'TABLE' && t.tagName !== 'H3') t = t.nextElementSibling;
      const rows = t?.tagName === 'TABLE' ? [...t.querySelectorAll('tr')].slice(1).map((r) => [...r.cells].map((c) => c.textContent)) : [];
      return { title: h3.textContent, rows };
    }),
  );
  assert.equal(tables.length, campaign.fits.length, tables.map((t) => t.title).join(' | '));
  // The report's tables in the record's order (a model fitted twice has two).
  for (const [n, fit] of campaign.fits.entries()) {
    const table = tables[n];
    assert.ok(table.title.startsWith(`${fit.model} · ${fit.procedure}`), `table ${n} is ${fit.model} · ${fit.procedure}: ${table.title}`);
    const r = fit.report;
    const neg = r.params.negative ?? {};
    // The rows the API's fit asks for: a key of both directions as k⁺ and k⁻.
    const want = [];
    for (const k of Object.keys(r.params).filter((k) => k !== 'negative'))
      if (k in neg) want.push([`${k}⁺`, k, false], [`${k}⁻`, k, true]);
      else want.push([k, k, false]);
    for (const k of Object.keys(neg)) if (!(k in r.params)) want.push([`${k}⁻`, k, true]);
    assert.deepEqual(table.rows.map((row) => row[0]), want.map(([label]) => label), `${fit.model}: one row per parameter and direction`);
    assert.ok(want.some(([label]) => label.endsWith('⁻')), `${fit.model}: the negative direction is fitted`);
    const side = (m, isNeg) => (isNeg ? m?.negative : m) ?? {};
    for (const [i, [label, k, isNeg]] of want.entries()) {
      const [, value, se, interval] = table.rows[i];
      const what = `${fit.model} ${label}`;
      near(value, side(r.params, isNeg)[k], `${what} value`);
      const s = side(r.std_errors, isNeg)[k];
      if (typeof s === 'number') near(se, s, `${what} standard error`);
      const ci = side(r.ci95, isNeg)[k];
      if (Array.isArray(ci)) {
        const [lo, hi] = interval.replace(/[[\]]/g, '').split(', ');
        near(lo, ci[0], `${what} interval low`);
        near(hi, ci[1], `${what} interval high`);
      } else assert.equal(interval, '–', `${what}: no interval in the API, none shown`);
    }
  }
  await h.page.locator('table.params').first().screenshot({ path: path.join(shots, 'report-params.png') });
});

test('report: the ranking in N m and N² m², each model, the floor, each of its parts and the truth equal to the answer', async () => {
  await openReport();
  const rows = await h.page.$$eval('#ranking tr', (trs) => trs.map((r) => [...r.cells].map((c) => c.textContent)));
  const [head, ...body] = rows;
  assert.deepEqual(head.slice(2, 4), ['validation RMS [N m]', 'validation MSE [N² m²]']);
  const a = campaign.answer;
  for (const m of a.ranking) {
    const row = body.find((r) => r[1] === m.model);
    assert.ok(row, `${m.model} ranked`);
    assert.equal(row[0], String(m.rank));
    near(row[2], m.validation_rms, `${m.model} RMS`);
    near(row[3], m.validation_mse, `${m.model} MSE`);
  }
  // The floor and its parts (`answer.floor_parts`), each row as the report prints it: RMS to
  // 4 decimals, MSE in N² m² to 4 significant digits.
  const parts = a.floor_parts;
  assert.ok(parts && typeof parts.resolution_mse === 'number', `the floor's parts: ${JSON.stringify(parts)}`);
  near(parts.repeat_mse + parts.resolution_mse, a.floor_mse, 'the floor is the sum of its parts');
  const shown = (label, mse) => {
    const row = body.find((r) => r[1] === label);
    assert.ok(row, `a row “${label}” in ${body.map((r) => r[1]).join(' | ')}`);
    assert.deepEqual(row.slice(2, 4), [Math.sqrt(mse).toFixed(4), exp3(mse)], `${label}: [RMS, MSE] as the answer's ${mse}`);
  };
  shown('the floor: repeatability + encoder resolution', a.floor_mse);
  shown('the bench\'s repeatability (validation profile run twice)', parts.repeat_mse);
  assert.ok(parts.model, 'the model the resolution part replayed');
  shown(`the encoder's resolution (${parts.model} on dithered angles)`, parts.resolution_mse);
  shown('true model (simulated bench)', a.truth_validation_mse);
  // Two models on one rank carry a tie note.
  const ranks = a.ranking.map((m) => m.rank);
  for (const m of a.ranking.filter((m) => ranks.filter((r) => r === m.rank).length > 1))
    assert.match(body.find((r) => r[1] === m.model)[4], /shares rank/, `${m.model}: the tie said`);
});

test('report: every plot states its measured range; stick-slip points hollow, as many as the sweep left out; ticks round with SI prefixes', async () => {
  await openReport();
  const plots = await h.page.$$eval('svg', (svgs) =>
    svgs.map((s) => ({
      range: s.nextElementSibling?.classList.contains('range') ? s.nextElementSibling.textContent : null,
      ticks: ['xtick', 'ytick'].map((c) => [...s.querySelectorAll(`text.${c}`)].map((t) => t.textContent)),
      hollow: s.querySelectorAll('circle[fill="none"]').length,
      legend: [...s.querySelectorAll('text')].map((t) => t.textContent),
    })),
  );
  assert.ok(plots.length >= 3, `${plots.length} plots`);
  for (const [i, p] of plots.entries()) {
    assert.match(p.range ?? '', /^measured: .+ \(\d+ points\)$/, `plot ${i}: its measured range stated`);
    for (const ticks of p.ticks) roundTicks(ticks, `plot ${i}`);
  }
  // The Stribeck plot: the sweep's stick-slip points drawn hollow, all of its points counted.
  const sweepRun = campaign.steps.find((s) => s.name === 'sweep').run_id;
  const res = (await h.api(`/api/runs/${sweepRun}/results`)).json;
  const pts = [...res.positive, ...res.negative];
  const slipped = pts.filter((p) => p.stick_slip).length;
  const stribeck = plots.find((p) => p.legend.some((l) => /^measured \+$/.test(l)));
  assert.ok(stribeck, 'a Stribeck plot');
  assert.ok(slipped > 0, 'the default bench slips at the slowest speeds');
  assert.equal(stribeck.hollow, slipped, 'one hollow circle per stick-slip point of the sweep');
  assert.ok(stribeck.legend.includes('stick-slip, left out (hollow)'));
  assert.match(stribeck.range, new RegExp(`\\(${pts.length} points\\)$`));
  await h.shot('report');
});

noExternalRequests(h);
