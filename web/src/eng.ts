// Engineering notation for axes and tables: a power-of-1000 SI prefix on the unit (µrad,
// mN m) chosen from the largest value shown, and just enough decimals that no two round ticks
// print alike, so a presliding axis (±1e-4 rad) reads "−100 … 100 µrad", never a column of "0".

const PREFIX: Record<number, string> = { [-12]: 'p', [-9]: 'n', [-6]: 'µ', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G' };

/** Units a prefix may go in front of; anything else (already prefixed, compound) stays as is. */
const PREFIXABLE = new Set(['rad', 'N m', 'N', 'm', 'rad/s', 'm/s', 's', 'N m/s', 'N/s']);

export interface EngScale {
  /** The prefixed unit, e.g. `µrad` (the unit itself when no prefix applies). */
  unit: string;
  /** Divide a value in the base unit by this to print it in `unit`. */
  div: number;
}

/** The prefix that suits values up to `maxAbs` in `unit` (no prefix for an unprefixable unit). */
export function engScale(maxAbs: number, unit: string): EngScale {
  if (!PREFIXABLE.has(unit) || !(maxAbs > 0) || !Number.isFinite(maxAbs)) return { unit, div: 1 };
  let e = Math.floor(Math.log10(maxAbs) / 3) * 3;
  e = Math.max(-12, Math.min(9, e));
  // Kilo-radians and kiloseconds read worse than the plain number.
  if (e > 0 && unit !== 'N' && unit !== 'N m') e = 0;
  return { unit: `${PREFIX[e]}${unit}`, div: Math.pow(10, e) };
}

/** Tick labels for `ticks` (round values in the base unit) in `scale`: the fewest decimals that
 *  keep every label distinct; "−0" printed as "0". */
export function engTicks(ticks: number[], scale: EngScale): string[] {
  const v = ticks.map((t) => t / scale.div);
  let steps = Infinity;
  for (let i = 1; i < v.length; i++) steps = Math.min(steps, Math.abs(v[i] - v[i - 1]));
  let d = Number.isFinite(steps) && steps > 0 ? Math.max(0, Math.ceil(-Math.log10(steps) - 1e-9)) : 0;
  const show = (x: number, k: number) => {
    const s = x.toFixed(k);
    return Number(s) === 0 ? '0' : s.replace('-', '−');
  };
  for (; d < 9; d++) {
    const out = v.map((x) => show(x, d));
    if (new Set(out).size === out.length) return out;
  }
  return v.map((x) => show(x, d));
}

/** One value with its prefixed unit, 3 significant digits: `engValue(2.3e-4, 'N m')` → `230 µN m`. */
export function engValue(x: number | null | undefined, unit: string): string {
  if (x == null || !Number.isFinite(x)) return '—';
  const s = engScale(Math.abs(x), unit);
  const y = x / s.div;
  const digits = Math.abs(y) >= 100 ? 0 : Math.abs(y) >= 10 ? 1 : 2;
  return `${y.toFixed(digits).replace('-', '−')} ${s.unit}`;
}

/** `name [unit]` → [name, unit]; a label without a bracketed unit → [label, '']. */
export function splitLabel(label: string): [string, string] {
  const m = label.match(/^(.*?)\s*\[([^\]]+)\]\s*$/);
  return m ? [m[1], m[2]] : [label, ''];
}

/** The axis label with its unit prefixed for values up to `maxAbs`, and the tick labels. */
export function engAxis(label: string, ticks: number[]): { label: string; ticks: string[] } {
  const [name, unit] = splitLabel(label);
  if (!unit) return { label, ticks: engTicks(ticks, { unit: '', div: 1 }) };
  const s = engScale(Math.max(0, ...ticks.map((t) => Math.abs(t))), unit);
  return { label: name ? `${name} [${s.unit}]` : `[${s.unit}]`, ticks: engTicks(ticks, s) };
}
