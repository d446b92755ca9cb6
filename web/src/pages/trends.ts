// Trends: one parameter over many runs (GET /api/trends, as `bench trends`), plotted per bench
// and series with its control limits; flagged points drawn apart; every point links to its run.
import { get, qs } from '../api';
import { h, clear } from '../dom';
import { xyPlot, XYSeries, PALETTE } from '../xyplot';

interface Point {
  run_id: number;
  bench_id: string;
  at: string;
  model: string;
  idx: number;
  value: number;
  std_error: number | null;
  tags: string[];
  outside: boolean | null;
}

interface Series {
  bench_id: string;
  model: string;
  idx: number;
  points: number;
  limits: { lower: number | null; upper: number | null; mean: number | null; method: string; baseline_points: number; note: string | null };
}

interface Trend {
  param: string;
  points: Point[];
  series: Series[];
  outside: number;
}

const FIELDS: [string, string, string][] = [
  ['param', 'Parameter', 'fs'],
  ['model', 'Model', 'lugre'],
  ['bench', 'Bench', ''],
  ['since', 'Since (YYYY-MM-DD)', ''],
  ['until', 'Until', ''],
  ['baseline_until', 'Baseline until', ''],
  ['band', 'Band (fraction, blank: ±3σ)', ''],
];

/** Days since the Unix epoch: the plot's time axis. */
const days = (at: string) => Date.parse(at) / 86_400_000;

export function trendsPage(root: HTMLElement): void {
  const inputs = new Map<string, HTMLInputElement>();
  const form = h('form', { id: 'trends-form', class: 'card' });
  for (const [name, label, value] of FIELDS) {
    const input = h('input', { id: `trends-${name}`, name, value });
    inputs.set(name, input);
    form.append(h('div', { class: 'field' }, h('label', { for: input.id }, label), input));
  }
  form.append(h('button', { type: 'submit' }, 'Show'));
  const out = h('div', { id: 'trends-out' });
  root.append(h('h1', null, 'Trends'), form, out);
  // Only the latest request's answer is shown: the page's first load, answered late, must
  // not overwrite what a submitted form asked for.
  let latest = 0;
  const load = async () => {
    const mine = ++latest;
    const q: Record<string, string> = {};
    for (const [name, input] of inputs) if (input.value.trim()) q[name] = input.value.trim();
    try {
      const t = await get<Trend>(`/api/trends${qs(q)}`);
      if (mine === latest) show(out, t);
    } catch (e) {
      if (mine === latest) clear(out, h('p', { class: 'bad', role: 'alert' }, (e as Error).message));
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    load();
  });
  load();
}

function show(out: HTMLElement, t: Trend) {
  if (!t.points.length) {
    clear(out, h('p', { class: 'muted' }, `No runs have a value of '${t.param}' with these filters.`));
    return;
  }
  const benches = [...new Set(t.series.map((s) => s.bench_id))];
  clear(
    out,
    h('p', { id: 'trends-summary' }, `${t.points.length} points, ${t.outside} outside their limits`),
    benches.map((b) => benchCard(t, b)),
    table(t),
  );
}

/** One bench's plot: each series' points (flagged ones as rings) with its limits as lines. */
function benchCard(t: Trend, bench: string): HTMLElement {
  const series: XYSeries[] = [];
  t.series.filter((s) => s.bench_id === bench).forEach((s, k) => {
    const pts = t.points.filter((p) => p.bench_id === bench && p.model === s.model && p.idx === s.idx);
    const color = PALETTE[k % PALETTE.length];
    const label = `${s.model || t.param}${s.idx ? ` #${s.idx}` : ''}`;
    const part = (outside: boolean) => pts.filter((p) => (p.outside === true) === outside);
    for (const outside of [false, true]) {
      const ps = part(outside);
      if (ps.length)
        series.push({ label: outside ? `${label} outside` : label, x: ps.map((p) => days(p.at)), y: ps.map((p) => p.value), err: ps.map((p) => p.std_error ?? 0), mode: 'points', color, hollow: outside });
    }
    const xs = [days(pts[0].at), days(pts[pts.length - 1].at)];
    for (const [name, y] of [['lower', s.limits.lower], ['upper', s.limits.upper]] as const)
      if (y !== null) series.push({ label: `${label} ${name} limit`, x: xs, y: [y, y], mode: 'line', color });
  });
  return h('section', { class: 'card', 'data-bench': bench }, h('h2', null, `Bench ${bench}`), xyPlot({ title: `${t.param} on ${bench}`, xLabel: 'days since 1970-01-01 (UTC)', yLabel: t.param, series, testId: `trend-plot-${bench}` }));
}

/** Every point, each linked to its run. */
function table(t: Trend): HTMLElement {
  const flag = (p: Point) => (p.outside === null ? '—' : p.outside ? 'OUTSIDE' : 'ok');
  return h(
    'table',
    { class: 'data', id: 'trends-table' },
    h('thead', null, h('tr', null, ['run', 'at', 'bench', 'model', 'value', 'std error', 'limits', 'tags'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      null,
      t.points.map((p) =>
        h(
          'tr',
          { class: p.outside ? 'bad' : '' },
          h('td', null, h('a', { href: `#/runs/${p.run_id}` }, `#${p.run_id}`)),
          h('td', null, p.at),
          h('td', null, p.bench_id),
          h('td', null, p.model || '—'),
          h('td', null, p.value.toPrecision(6)),
          h('td', null, p.std_error === null ? '—' : p.std_error.toPrecision(3)),
          h('td', null, flag(p)),
          h('td', null, p.tags.join(', ')),
        ),
      ),
    ),
  );
}
