// uPlot time-series charts (live bench view and a run's recorded samples).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { PALETTE } from './xyplot';
import { engAxis } from './eng';

export interface TSChart {
  plot: uPlot;
  set(data: (number | null)[][]): void;
  /** Shows or hides series `i` (0 = the first after t), as a click on its legend entry does. */
  show(i: number, on: boolean): void;
  destroy(): void;
}

/** The finite range of `series`, padded by 8 % (null when none is finite). */
function rangeOf(series: (number | null)[][]): [number, number] | null {
  let lo = Infinity, hi = -Infinity;
  for (const s of series)
    for (const y of s) {
      if (y == null || !Number.isFinite(y)) continue;
      if (y < lo) lo = y;
      if (y > hi) hi = y;
    }
  if (!Number.isFinite(lo)) return null;
  const pad = (hi - lo || Math.abs(hi) || 1) * 0.08;
  return [lo - pad, hi + pad];
}

/** A y range computed from the data (e.g. the residual chart: ± the measured torque). */
export type Scale = (data: (number | null)[][]) => [number, number] | null;

/** ± the largest |value| of `series` (padded), for residuals against a measured signal. */
export function symmetricScale(series: () => (number | null)[] | ArrayLike<number>): Scale {
  return () => {
    const r = rangeOf([Array.from(series() as ArrayLike<number>)]);
    if (!r) return null;
    const m = Math.max(Math.abs(r[0]), Math.abs(r[1]));
    return [-m, m];
  };
}

/**
 * A chart of `labels.length` series against run time; `data[0]` is t.
 *
 * With `measured = n`, the first `n` series (the measured signals) alone set the y scale; a
 * later series (a model output) outside that range is clipped to its edge and the clipped
 * samples are marked with dots, so a model that runs away cannot flatten the measurement. The
 * `measured` may instead be a [`Scale`]: every series is then clipped to its range. The
 * element carries `data-clipped` (clipped samples in all) and `data-y-range` (`lo,hi` of that
 * scale), and a note names the clipped series (those hidden apart, rewritten as the legend
 * toggles them).
 */
export function timeChart(el: HTMLElement, title: string, yLabel: string, labels: string[], width = 620, height = 220, measured?: number | Scale, hidden: boolean[] = []): TSChart {
  let range: [number, number] | null = null;
  // The y axis in engineering notation: its ticks and its label's unit prefix are chosen
  // from the ticks uPlot places (round values), each time it draws them.
  let axisLabel = yLabel;
  const yValues = (_u: uPlot, splits: number[]) => {
    const a = engAxis(yLabel, splits);
    axisLabel = a.label;
    el.dataset.yLabel = a.label;
    el.dataset.yTicks = a.ticks.join('|');
    return a.ticks;
  };
  let clipped: number[][] = labels.map(() => []);
  const note = document.createElement('p');
  note.className = 'muted clip-note';
  const opts: uPlot.Options = {
    title,
    width,
    height,
    cursor: { sync: { key: 'fb' } },
    scales: {
      x: { time: false },
      y: { range: (_u, min, max) => (range ? range : uPlot.rangeNum(min, max, 0.1, true)) },
    },
    axes: [{ label: 't [s]' }, { label: () => axisLabel, size: 70, values: yValues }],
    series: [
      { label: 't [s]' },
      ...labels.map((l, i) => ({
        label: l,
        show: !hidden[i],
        stroke: PALETTE[i % PALETTE.length],
        width: 1.25,
        points: {
          show: true,
          size: 5,
          fill: PALETTE[i % PALETTE.length],
          // Only the clipped samples get a marker.
          filter: (_u: uPlot, si: number) => clipped[si - 1] ?? [],
        },
      })),
    ],
  };
  const data = [[], ...labels.map(() => [])] as unknown as uPlot.AlignedData;
  el.setAttribute('role', 'figure');
  // The y label and its font, for the e2e check that it fits beside the plot.
  el.dataset.yLabel = yLabel;
  el.dataset.labelFont = 'bold 12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
  el.setAttribute('aria-label', `${title}: ${labels.join(', ')} against run time`);
  // The clipped series by name, those shown first; hidden ones said apart.
  const writeNote = () => {
    const named = (on: boolean) =>
      clipped.map((c, i) => (c.length && (plot.series[i + 1]?.show !== false) === on ? `${labels[i]} (${c.length})` : '')).filter((x) => x);
    const shown = named(true), hidden = named(false);
    note.textContent = shown.length || hidden.length
      ? `Scaled to the measured signals; model output beyond them clipped at the edge and marked with dots: ${shown.join(', ') || 'none shown'}${hidden.length ? `; hidden, clipped too: ${hidden.join(', ')}` : ''}.`
      : '';
  };
  opts.hooks = { setSeries: [() => writeNote()] };
  const plot = new uPlot(opts, data, el);
  el.append(note);
  return {
    plot,
    set(d) {
      clipped = labels.map(() => []);
      if (measured !== undefined) {
        // Series index below which nothing is clipped (t and the measured signals).
        const keep = typeof measured === 'number' ? measured : 0;
        range = typeof measured === 'number' ? rangeOf(d.slice(1, 1 + measured)) : measured(d);
        if (range) {
          const [lo, hi] = range;
          d = d.map((s, k) => {
            if (k <= keep) return s;
            return s.map((y, i) => {
              if (y == null || !Number.isFinite(y)) return y;
              if (y > hi || y < lo) {
                clipped[k - 1].push(i);
                return y > hi ? hi : lo;
              }
              return y;
            });
          });
        }
      }
      const total = clipped.reduce((a, c) => a + c.length, 0);
      el.dataset.clipped = String(total);
      if (range) el.dataset.yRange = `${range[0]},${range[1]}`;
      plot.setData(d as unknown as uPlot.AlignedData);
      writeNote();
    },
    show(i, on) {
      if (plot.series[i + 1] && plot.series[i + 1].show !== on) plot.setSeries(i + 1, { show: on });
    },
    destroy() {
      plot.destroy();
    },
  };
}
