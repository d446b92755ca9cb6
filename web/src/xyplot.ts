// A small canvas plot for x–y data (Stribeck points with error bars, loops, curves), where
// x is not a time axis and need not be monotonic. Time series use uPlot (timeseries.ts).
import { h } from './dom';
import { engAxis } from './eng';

export interface XYSeries {
  label: string;
  x: number[];
  y: number[];
  /** ± error bar half-heights (e.g. a standard deviation), same length as y. */
  err?: number[];
  mode: 'points' | 'line';
  color?: string;
  /** Points drawn as rings, not discs (e.g. data left out of a fit). */
  hollow?: boolean;
  /** Marker radius [px] (default 3.5; smaller for dense scatters). */
  radius?: number;
}

export interface XYOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: XYSeries[];
  width?: number;
  height?: number;
  testId?: string;
}

export const PALETTE = ['#1f5fbf', '#c0392b', '#2e8b57', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#b7950b', '#2c3e50', '#e84393'];

function niceTicks(lo: number, hi: number, n = 6): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

const swatchStyle = (color: string, hollow: boolean) => (hollow ? `border:2px solid ${color};background:transparent` : `background:${color}`);

/** Draws the plot; the figure carries `data-points` (point markers drawn) and `data-lines` (curves drawn). */
export function xyPlot(opt: XYOptions): HTMLElement {
  const width = opt.width ?? 640;
  const height = opt.height ?? 360;
  const canvas = h('canvas', { role: 'img', 'aria-label': `${opt.title}: ${opt.yLabel} against ${opt.xLabel}` });
  const dpr = window.devicePixelRatio || 1;
  canvas.width = width * dpr;
  canvas.height = height * dpr;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d')!;
  ctx.scale(dpr, dpr);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);

  let xmin = Infinity, xmax = -Infinity, ymin = Infinity, ymax = -Infinity;
  for (const s of opt.series)
    s.x.forEach((x, i) => {
      const y = s.y[i], e = s.err?.[i] ?? 0;
      if (!Number.isFinite(x) || !Number.isFinite(y)) return;
      xmin = Math.min(xmin, x); xmax = Math.max(xmax, x);
      ymin = Math.min(ymin, y - e); ymax = Math.max(ymax, y + e);
    });
  if (!Number.isFinite(xmin)) { xmin = 0; xmax = 1; ymin = 0; ymax = 1; }
  const padX = (xmax - xmin || Math.abs(xmax) || 1) * 0.05, padY = (ymax - ymin || Math.abs(ymax) || 1) * 0.08;
  xmin -= padX; xmax += padX; ymin -= padY; ymax += padY;
  const L = 64, R = 12, T = 12, B = 44;
  const px = (x: number) => L + ((x - xmin) / (xmax - xmin)) * (width - L - R);
  const py = (y: number) => height - B - ((y - ymin) / (ymax - ymin)) * (height - T - B);

  // Grid and axes.
  ctx.font = '12px system-ui, sans-serif';
  ctx.strokeStyle = '#e3e3e3';
  ctx.fillStyle = '#333';
  ctx.lineWidth = 1;
  ctx.textAlign = 'center';
  // Engineering notation: the unit in each label gets the prefix that suits its ticks.
  const xt = niceTicks(xmin, xmax), yt = niceTicks(ymin, ymax);
  const xa = engAxis(opt.xLabel, xt), ya = engAxis(opt.yLabel, yt);
  xt.forEach((v, i) => {
    ctx.beginPath(); ctx.moveTo(px(v), T); ctx.lineTo(px(v), height - B); ctx.stroke();
    ctx.fillText(xa.ticks[i], px(v), height - B + 16);
  });
  ctx.textAlign = 'right';
  yt.forEach((v, i) => {
    ctx.beginPath(); ctx.moveTo(L, py(v)); ctx.lineTo(width - R, py(v)); ctx.stroke();
    ctx.fillText(ya.ticks[i], L - 6, py(v) + 4);
  });
  ctx.strokeStyle = '#555';
  ctx.strokeRect(L, T, width - L - R, height - T - B);
  ctx.textAlign = 'center';
  ctx.fillText(xa.label, L + (width - L - R) / 2, height - 8);
  ctx.save();
  ctx.translate(14, T + (height - T - B) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(ya.label, 0, 0);
  ctx.restore();

  // Data, clipped to the frame.
  ctx.save();
  ctx.beginPath(); ctx.rect(L, T, width - L - R, height - T - B); ctx.clip();
  let points = 0;
  let hollow = 0;
  let lines = 0;
  // Curves first, markers on top.
  const order = opt.series.map((s, k) => [s, k] as const).sort((a, b) => (a[0].mode === 'line' ? 0 : 1) - (b[0].mode === 'line' ? 0 : 1));
  order.forEach(([s, k]) => {
    const color = s.color ?? PALETTE[k % PALETTE.length];
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    if (s.mode === 'line') {
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let pen = false;
      s.x.forEach((x, i) => {
        const y = s.y[i];
        if (!Number.isFinite(x) || !Number.isFinite(y)) { pen = false; return; }
        if (pen) ctx.lineTo(px(x), py(y)); else ctx.moveTo(px(x), py(y));
        pen = true;
      });
      ctx.stroke();
      if (s.x.filter((x, i) => Number.isFinite(x) && Number.isFinite(s.y[i])).length >= 2) lines++;
      return;
    }
    ctx.lineWidth = 1;
    s.x.forEach((x, i) => {
      const y = s.y[i];
      if (!Number.isFinite(x) || !Number.isFinite(y)) return;
      const e = s.err?.[i];
      if (e && Number.isFinite(e) && e > 0) {
        ctx.beginPath();
        ctx.moveTo(px(x), py(y - e)); ctx.lineTo(px(x), py(y + e));
        ctx.moveTo(px(x) - 3, py(y - e)); ctx.lineTo(px(x) + 3, py(y - e));
        ctx.moveTo(px(x) - 3, py(y + e)); ctx.lineTo(px(x) + 3, py(y + e));
        ctx.stroke();
      }
      ctx.beginPath(); ctx.arc(px(x), py(y), s.radius ?? 3.5, 0, 2 * Math.PI);
      if (s.hollow) {
        ctx.lineWidth = 1.5;
        ctx.stroke();
        ctx.lineWidth = 1;
        hollow++;
      } else ctx.fill();
      points++;
    });
  });
  ctx.restore();

  const legend = h(
    'ul',
    { class: 'legend' },
    opt.series.map((s, k) =>
      h('li', null, h('span', { class: s.hollow ? 'swatch hollow' : 'swatch', style: swatchStyle(s.color ?? PALETTE[k % PALETTE.length], !!s.hollow) }), ` ${s.label}`),
    ),
  );
  return h(
    'figure',
    {
      class: 'xyplot',
      'data-points': String(points),
      'data-hollow': String(hollow),
      'data-lines': String(lines),
      'data-testid': opt.testId,
      // What the e2e suite checks for fit: the labels and the room they have [CSS px].
      'data-x-label': xa.label,
      'data-y-label': ya.label,
      'data-x-ticks': xa.ticks.join('|'),
      'data-y-ticks': ya.ticks.join('|'),
      'data-x-room': String(width - L - R),
      'data-y-room': String(height - T - B),
      'data-label-font': ctx.font,
    },
    h('figcaption', null, opt.title),
    canvas,
    legend,
  );
}
