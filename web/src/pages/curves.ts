// The steady-state curves of a run's static_curve fits, as the service computes them
// (`POST /api/curves`, the friction crate's own model laws): no copy of the models here.
import { post } from '../api';
import { XYSeries } from '../xyplot';
import type { components } from '../api-types';

type Curve = components['schemas']['Curve'];
type CurveRequest = components['schemas']['CurveRequest'];

/** A stored parameter set, as far as a curve needs it. */
export interface FitSet {
  id: number;
  name: string;
  /** One of the registry's model ids: the service stored the set. */
  model_id: CurveRequest['model'];
  params?: CurveRequest['params'];
}

/** The fitted curves over ±1.05 `vmax`, a gap at v = 0; `end`: the last point of the first curve. */
export async function fittedCurves(fits: FitSet[], vmax: number): Promise<{ series: XYSeries[]; end: [number, number] | null }> {
  const grid: number[] = [];
  for (let i = -200; i <= 200; i++) if (i !== 0) grid.push((vmax * 1.05 * i) / 200);
  const series: XYSeries[] = [];
  let end: [number, number] | null = null;
  for (const fit of fits) {
    // The stored document: the model's parameters, `negative` the overrides for v < 0.
    const req: CurveRequest = { model: fit.model_id, params: fit.params ?? {}, v: grid };
    const c = await post<Curve>('/api/curves', req).catch(() => null);
    if (!c) continue;
    const xs: number[] = [], ys: number[] = [];
    c.v.forEach((v, i) => {
      if (i === 200) { xs.push(NaN); ys.push(NaN); }
      xs.push(v);
      ys.push(c.friction[i] ?? NaN);
    });
    end ??= [xs[xs.length - 1], ys[ys.length - 1]];
    series.push({ label: `fitted ${fit.model_id} “${fit.name}” (#${fit.id})`, x: xs, y: ys, mode: 'line' });
  }
  return { series, end };
}
