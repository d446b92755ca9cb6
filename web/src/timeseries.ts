// uPlot time-series charts (live bench view and a run's recorded samples).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { PALETTE } from './xyplot';

export interface TSChart {
  plot: uPlot;
  set(data: (number | null)[][]): void;
  destroy(): void;
}

/** A chart of `labels.length` series against run time; `data[0]` is t. */
export function timeChart(el: HTMLElement, title: string, yLabel: string, labels: string[], width = 620, height = 220): TSChart {
  const opts: uPlot.Options = {
    title,
    width,
    height,
    cursor: { sync: { key: 'fb' } },
    scales: { x: { time: false } },
    axes: [{ label: 't [s]' }, { label: yLabel, size: 70 }],
    series: [
      { label: 't [s]' },
      ...labels.map((l, i) => ({ label: l, stroke: PALETTE[i % PALETTE.length], width: 1.25, points: { show: false } })),
    ],
  };
  const data = [[], ...labels.map(() => [])] as unknown as uPlot.AlignedData;
  el.setAttribute('role', 'figure');
  el.setAttribute('aria-label', `${title}: ${labels.join(', ')} against run time`);
  const plot = new uPlot(opts, data, el);
  return {
    plot,
    set(d) {
      plot.setData(d as unknown as uPlot.AlignedData);
    },
    destroy() {
      plot.destroy();
    },
  };
}
