// A parameter given as a list of numbers or as "from, to, step" (the sweep's velocities): the
// list input keeps the parameter's id; the three range inputs sit beside it, and whichever was
// edited last is what the spec sends. A range goes to the server as `{from, to, step}` (it
// expands and checks it, naming `params.velocities.step` and the like).
import { h } from './dom';

export interface RangeField {
  /** The list input (id `${id}`), the range inputs (`${id}-from`, `-to`, `-step`) and a count. */
  el: HTMLElement;
  list: HTMLInputElement;
  /** The value to send: a list of numbers, `{from, to, step}`, or null (nothing entered). */
  value(): number[] | Range | null;
  /** Shows `v` (a list or a range object). */
  set(v: unknown): void;
}

/** A list given as a range; the server expands it (inclusive within 1e-9 of a step). */
export interface Range {
  from: number;
  to: number;
  step: number;
}

const isRange = (v: unknown): v is Range => !!v && typeof v === 'object' && !Array.isArray(v) && 'from' in v && 'to' in v && 'step' in v;

/** The magnitudes a range gives, as the server counts them (inclusive within 1e-9 of a step). */
export function rangeCount(from: number, to: number, step: number): number | null {
  if (!(step > 0) || !(to >= from)) return null;
  return Math.floor((to - from) / step + 1e-9) + 1;
}

export function rangeField(id: string, name: string, unit: string, onChange: () => void): RangeField {
  const list = h('input', { id, type: 'text', 'data-param': name, inputmode: 'decimal', spellcheck: 'false', autocomplete: 'off', placeholder: 'e.g. 0.05, 0.1, 0.2' });
  const part = (k: string) => h('input', { id: `${id}-${k}`, type: 'text', inputmode: 'decimal', size: 7, autocomplete: 'off', 'data-range': k });
  const from = part('from'), to = part('to'), step = part('step');
  const count = h('span', { class: 'help', id: `${id}-count`, 'aria-live': 'polite' });
  const lab = (input: HTMLInputElement, text: string) => h('label', { for: input.id, class: 'inline' }, text);
  const u = unit ? h('span', { class: 'unit', id: `${id}-unit` }, unit) : null;
  const el = h(
    'div',
    { class: 'list-or-range', 'data-mode': 'list' },
    h('div', { class: 'with-unit' }, list, u),
    h('div', { class: 'range-row', role: 'group', 'aria-label': `${name} as a range` }, 'or ', lab(from, 'from'), from, lab(to, 'to'), to, lab(step, 'step'), step, unit ? h('span', { class: 'unit' }, unit) : null),
    count,
  );
  const num = (i: HTMLInputElement) => (i.value.trim() === '' ? NaN : Number(i.value.trim()));
  const rangeGiven = () => [from, to, step].some((i) => i.value.trim() !== '');
  const describe = () => {
    if (el.dataset.mode === 'range') {
      const n = rangeCount(num(from), num(to), num(step));
      count.textContent = n == null ? 'from ≤ to and a step above 0 make a range' : `${n} values from ${from.value} to at most ${to.value}`;
    } else {
      const n = list.value.split(/[,\s]+/).filter(Boolean).length;
      count.textContent = n ? `${n} value${n === 1 ? '' : 's'}` : '';
    }
  };
  list.addEventListener('input', () => {
    el.dataset.mode = 'list';
    for (const i of [from, to, step]) i.value = '';
    describe();
    onChange();
  });
  for (const i of [from, to, step])
    i.addEventListener('input', () => {
      el.dataset.mode = rangeGiven() ? 'range' : 'list';
      list.value = '';
      describe();
      onChange();
    });
  const field: RangeField = {
    el,
    list,
    value() {
      if (el.dataset.mode === 'range') {
        const r = { from: num(from), to: num(to), step: num(step) };
        for (const [k, v] of Object.entries(r)) if (!Number.isFinite(v)) throw new Error(`${name}: “${k}” must be a number`);
        return r;
      }
      const parts = list.value.split(/[,\s]+/).filter(Boolean);
      if (!parts.length) return null;
      const bad = parts.find((p) => !Number.isFinite(Number(p)));
      if (bad !== undefined) throw new Error(`${name}: “${bad}” is not a number (a list is numbers separated by commas)`);
      return parts.map(Number);
    },
    set(v) {
      if (isRange(v)) {
        el.dataset.mode = 'range';
        list.value = '';
        from.value = String(v.from);
        to.value = String(v.to);
        step.value = String(v.step);
      } else {
        el.dataset.mode = 'list';
        list.value = Array.isArray(v) ? v.join(', ') : '';
        for (const i of [from, to, step]) i.value = '';
      }
      describe();
    },
  };
  return field;
}

/** Whether parameter doc `p` takes a list or a `{from, to, step}` range (its schema allows both). */
export function takesRange(type: string | string[] | null, def: unknown): boolean {
  const t = [type].flat();
  return t.includes('array') && t.includes('object') && (isRange(def) || (Array.isArray(def) && def.every((x) => typeof x === 'number')));
}
