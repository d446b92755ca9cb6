// The shipped specs as presets: a picker that fills a spec form, each choice with its duration
// as the daemon estimates it (`POST /api/experiments/check`) on this bench.
import { post, type Schemas } from './api';
import { h, duration } from './dom';
import { PRESETS } from './presets';
import { SpecForm } from './specform';

const label = (i: number, est?: string) => {
  const p = PRESETS[i];
  return `${p.spec.name ?? p.file} (${p.spec.kind}${p.full ? ', paper' : ''})${est ? ` · ${est}` : ''}`;
};

/** The picker (`#PREFIX-preset`), the first preset loaded into `f`. Editing the kind by hand
 *  leaves the picker on “your own”. */
export function presetPicker(prefix: string, f: SpecForm): HTMLElement {
  const own = h('option', { value: '' }, 'your own: the kind’s defaults, as edited');
  const sel = h(
    'select',
    { id: `${prefix}-preset` },
    h('optgroup', { label: 'Quick (the shipped specs, about a minute or less)' }, PRESETS.map((p, i) => (p.full ? null : h('option', { value: p.file, 'data-index': String(i) }, label(i))))),
    h('optgroup', { label: 'The papers’ full procedures (long)' }, PRESETS.map((p, i) => (p.full ? h('option', { value: p.file, 'data-index': String(i) }, label(i)) : null))),
    own,
  );
  const apply = () => {
    const p = PRESETS.find((x) => x.file === sel.value);
    if (p) f.load(p.spec);
  };
  sel.addEventListener('change', apply);
  const kind = f.el.querySelector('select[name="kind"]');
  kind?.addEventListener('change', () => (sel.value = ''));
  apply();
  // Each preset's duration on this bench, filled in as the daemon answers.
  PRESETS.forEach((p, i) =>
    post<Schemas['Checked']>('/api/experiments/check', p.spec).then(
      (r) => {
        const o = sel.querySelector<HTMLOptionElement>(`option[data-index="${i}"]`);
        if (!o) return;
        o.textContent = label(i, duration(r.estimate_s));
        o.dataset.estimateS = String(r.estimate_s);
      },
      () => {},
    ),
  );
  return h(
    'div',
    { class: 'field' },
    h('label', { for: sel.id }, 'Start from'),
    sel,
    h('span', { class: 'help' }, 'The specs shipped in experiments/specs/, with the time each takes on this bench; pick one, then edit any field.'),
  );
}
