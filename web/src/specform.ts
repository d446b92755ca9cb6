// A form for one experiment spec, generated from `GET /api/experiments/kinds`: a field per
// parameter with its unit and default; the server's 422 message is shown beside the field it
// names.
import { h, clear, duration, field } from './dom';
import { rangeField, RangeField, takesRange } from './rangefield';
import type { Schemas } from './api';

export interface ParamDoc {
  name: string;
  default: unknown;
  unit: string;
  doc: string;
  /** JSON type(s) from the kind's JSON Schema: "number", ["number", "null"], "array", ... */
  type: string | string[] | null;
  /** The allowed values of an enumerated parameter, else null. */
  choices: string[] | null;
}

export interface KindDoc {
  kind: string;
  description: string;
  estimate_s: number | null;
  params: ParamDoc[];
}

/** The catalogue as the server gives it: each kind's parameters in declaration order. */
export function normaliseKinds(raw: Schemas['Kinds']): KindDoc[] {
  const list = Array.isArray(raw) ? raw : [];
  return list.map((k) => ({
    kind: k.kind ?? '',
    description: k.description ?? '',
    estimate_s: k.estimate_s ?? null,
    params: (k.params ?? []).map((p) => ({
      name: p.name ?? '',
      default: p.default ?? null,
      unit: p.unit ?? '',
      doc: p.description ?? '',
      type: jsonType(p.type),
      choices: Array.isArray(p.choices) ? p.choices : null,
    })),
  }));
}

/** A parameter's JSON Schema `type`: a name or a list of names (the document leaves it open). */
function jsonType(t: unknown): string | string[] | null {
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return null;
}

const numeric = (p: ParamDoc): boolean => [p.type].flat().some((t) => t === 'number' || t === 'integer');

const show = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return v.join(', ');
  return JSON.stringify(v);
};

/** Text → JSON value: JSON if it parses, else a comma-separated list of numbers, else text. */
function parse(text: string, def: unknown): unknown {
  const t = text.trim();
  if (t === '') return null;
  if (typeof def === 'string') return t;
  try {
    return JSON.parse(t);
  } catch {
    /* fall through */
  }
  const parts = t.split(/[,\s]+/).filter(Boolean);
  if (parts.length && parts.every((p) => p !== '' && !Number.isNaN(Number(p)))) {
    const nums = parts.map(Number);
    return Array.isArray(def) || (def && typeof def === 'object') || nums.length > 1 ? nums : nums[0];
  }
  return t;
}

/** The parameter a server field path names: `params.velocities[1]: travel …` → `velocities`. */
export function paramOfField(field: string | null): string | null {
  if (!field) return null;
  const m = field.match(/^(?:spec\.|batch\[\d+\]\.)?params\.([A-Za-z0-9_]+)/);
  if (m) return m[1];
  const n = field.match(/^(?:spec\.)?(name|kind)\b/);
  return n ? `$${n[1]}` : null;
}

/** A parameter's name as a label, its unit left apart: `settle_s` → `settle`, `ramp_rate_rad_s`
 *  → `ramp rate` (the unit is shown beside the input; the key itself in the help). */
export function labelOf(name: string, unit: string): string {
  const bare = unit ? name.replace(/_(rad_s|nm_s|m_s|rad|nm|hz|s|m|n)$/, '') : name;
  return bare.replace(/_/g, ' ');
}

export interface SpecForm {
  el: HTMLElement;
  /** Fills the form from a spec (`{kind, name, params}`): its kind, then each parameter given. */
  load(spec: unknown): void;
  kind(): KindDoc;
  spec(): Record<string, unknown>;
  showError(field: string | null, message: string): boolean;
  clearErrors(): void;
  onChange(f: () => void): void;
}

export function specForm(kinds: KindDoc[], prefix: string, initial?: string): SpecForm {
  const el = h('div', { class: 'specform' });
  const kindSel = h(
    'select',
    { id: `${prefix}-kind`, name: 'kind' },
    kinds.map((k) => h('option', { value: k.kind, selected: k.kind === initial }, k.kind)),
  );
  const nameIn = h('input', { id: `${prefix}-name`, name: 'name', type: 'text', placeholder: '(defaults to the kind)' });
  const nameErr = h('p', { class: 'field-error', id: `${prefix}-err-$name`, role: 'alert', hidden: true });
  const desc = h('p', { class: 'muted' });
  const fields = h('div', { class: 'fields' });
  const general = h('p', { class: 'field-error', id: `${prefix}-err-general`, role: 'alert', hidden: true });
  let inputs: Map<string, { input: HTMLInputElement | HTMLSelectElement; err: HTMLElement; doc: ParamDoc; range?: RangeField }> = new Map();
  let changed: (() => void)[] = [];

  el.append(
    field(kindSel, 'Experiment kind'),
    desc,
    h('div', { class: 'field' }, h('label', { for: nameIn.id }, 'Name'), nameIn, nameErr),
    fields,
    general,
  );

  const current = () => kinds.find((k) => k.kind === kindSel.value) ?? kinds[0];
  const build = () => {
    const k = current();
    desc.textContent = [k.description, k.estimate_s != null ? `With its defaults a run takes about ${duration(k.estimate_s)}.` : ''].filter(Boolean).join(' ');
    inputs = new Map();
    clear(fields);
    for (const p of k.params) {
      const id = `${prefix}-param-${p.name}`;
      const err = h('p', { class: 'field-error', id: `${prefix}-err-${p.name}`, role: 'alert', hidden: true });
      // The doc comment states the default in words where it has one; else append it.
      const doc = p.doc.replace(/`/g, '');
      const tail = p.default !== null && !/default/i.test(doc) ? ` (default ${show(p.default)}${p.unit ? ' ' + p.unit : ''})` : '';
      const help = h('span', { class: 'help', id: `${id}-help` }, h('code', { class: 'key' }, p.name), ' ', doc || (p.default === null ? 'optional' : ''), tail);
      const unit = p.unit ? h('span', { class: 'unit', id: `${id}-unit` }, p.unit) : null;
      let input: HTMLInputElement | HTMLSelectElement;
      let range: RangeField | undefined;
      let control: HTMLElement;
      if (takesRange(p.type, p.default)) {
        range = rangeField(id, p.name, p.unit, () => changed.forEach((f) => f()));
        range.set(p.default);
        input = range.list;
      } else if (typeof p.default === 'boolean') {
        input = h('input', { id, type: 'checkbox', checked: p.default, 'data-param': p.name });
      } else if (p.choices) {
        input = h('select', { id, 'data-param': p.name }, p.choices.map((v) => h('option', { value: v, selected: v === p.default }, v)));
      } else {
        input = h('input', {
          id,
          type: 'text',
          value: show(p.default),
          'data-param': p.name,
          inputmode: numeric(p) ? 'decimal' : undefined,
          spellcheck: 'false',
          autocomplete: 'off',
        });
      }
      input.setAttribute('aria-describedby', `${unit ? unit.id + ' ' : ''}${id}-help ${err.id}`);
      if (range) control = range.el;
      else {
        input.addEventListener('input', () => changed.forEach((f) => f()));
        input.addEventListener('change', () => changed.forEach((f) => f()));
        control = h('div', { class: 'with-unit' }, input, unit);
      }
      inputs.set(p.name, { input, err, doc: p, range });
      fields.append(h('div', { class: 'field', 'data-field': p.name }, h('label', { for: id }, labelOf(p.name, p.unit)), control, help, err));
    }
    changed.forEach((f) => f());
  };
  kindSel.addEventListener('change', build);
  nameIn.addEventListener('input', () => changed.forEach((f) => f()));
  build();

  const form: SpecForm = {
    el,
    kind: current,
    load(raw) {
      const spec: { kind?: unknown; name?: unknown; params?: unknown } = raw && typeof raw === 'object' ? raw : {};
      const kind = kinds.find((k) => k.kind === spec.kind);
      if (kind) kindSel.value = kind.kind;
      build();
      nameIn.value = typeof spec.name === 'string' ? spec.name : '';
      const params = spec.params && typeof spec.params === 'object' ? spec.params : {};
      for (const [name, v] of Object.entries(params)) {
        const hit = inputs.get(name);
        if (!hit) continue;
        if (hit.range) hit.range.set(v);
        else if (hit.input instanceof HTMLInputElement && hit.input.type === 'checkbox') hit.input.checked = !!v;
        else hit.input.value = show(v);
      }
      changed.forEach((f) => f());
    },
    spec() {
      const params: Record<string, unknown> = {};
      for (const [name, { input, doc, range }] of inputs) {
        let v: unknown;
        if (range) {
          v = range.value();
          if (v === null) continue;
        } else if (input instanceof HTMLInputElement && input.type === 'checkbox') v = input.checked;
        else if (input instanceof HTMLSelectElement) v = input.value;
        else {
          if (input.value.trim() === show(doc.default)) continue; // unchanged: the server's default
          v = parse(input.value, doc.default);
          if (v === null && doc.default === null) continue;
        }
        if (JSON.stringify(v) === JSON.stringify(doc.default)) continue;
        params[name] = v;
      }
      const spec: Record<string, unknown> = { kind: current().kind, params };
      if (nameIn.value.trim()) spec.name = nameIn.value.trim();
      return spec;
    },
    showError(field, message) {
      const p = paramOfField(field);
      if (p === '$name') {
        nameErr.textContent = message;
        nameErr.hidden = false;
        nameIn.setAttribute('aria-invalid', 'true');
        return true;
      }
      const hit = p ? inputs.get(p) : undefined;
      if (hit) {
        hit.err.textContent = message;
        hit.err.hidden = false;
        hit.input.setAttribute('aria-invalid', 'true');
        return true;
      }
      general.textContent = field ? `${field}: ${message}` : message;
      general.hidden = false;
      return false;
    },
    clearErrors() {
      for (const { input, err } of inputs.values()) {
        err.hidden = true;
        err.textContent = '';
        input.removeAttribute('aria-invalid');
      }
      nameErr.hidden = true;
      nameIn.removeAttribute('aria-invalid');
      general.hidden = true;
    },
    onChange(f) {
      changed.push(f);
    },
  };
  return form;
}
