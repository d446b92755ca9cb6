// The fit form of Models & fits, built from the procedure registry (`GET /api/procedures`):
// the procedures that read the chosen run (its kind, or for an imported recording the columns it
// has) and fit the chosen model, their options as
// form fields from each option's JSON Schema, and held-out runs scored on the fitted set.
import { get, post, ApiError, RunSummary, type Schemas } from '../api';
import { h, clear, fmt, dataTable, notice, field } from '../dom';
import type { ImportedRun, ModelInfo, ValidationRow } from '../answers';

/** A procedure as `GET /api/procedures` answers it. */
export interface ProcedureInfo {
  id: string;
  models: string[];
  columns: string[];
  run_kinds: string[];
  options: { properties: Record<string, OptionSchema>; additionalProperties: boolean };
}

/** One option's JSON Schema (`bench-service/src/procedures.rs`). */
export interface OptionSchema {
  type?: string | string[];
  enum?: string[];
  default?: unknown;
  description?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  'x-unit'?: string;
  anyOf?: unknown[];
}

/**
 * The procedures that read a run of `kind` and fit `model`; an imported recording (`columns`:
 * the roles it has) is read by any procedure whose columns it has, whatever its run kinds say.
 */
export function applicable(procs: ProcedureInfo[], kind: string, model: string, columns: string[] | null): ProcedureInfo[] {
  const reads = (p: ProcedureInfo) => (columns ? p.columns.every((c) => columns.includes(c)) : p.run_kinds.includes(kind));
  return procs.filter((p) => reads(p) && (p.models.includes(model) || p.models.includes('*')));
}

/** The column roles of imported run `id` (`spec.columns` of `GET /api/runs/{id}`), asked once. */
const importedColumns = new Map<string, Promise<string[]>>();
function columnsOf(id: string): Promise<string[]> {
  if (!importedColumns.has(id)) importedColumns.set(id, get<ImportedRun>(`/api/runs/${id}`).then((r) => Object.keys(r.spec?.columns ?? {})));
  return importedColumns.get(id)!;
}

/** A form field for one option, and how to read its value (`undefined`: not given). */
interface OptionField {
  el: HTMLElement;
  read(): unknown;
}

function optionField(proc: string, name: string, s: OptionSchema): OptionField {
  const id = `fit-opt-${name}`;
  const unit = s['x-unit'] ? ` [${s['x-unit']}]` : '';
  const label = (input: HTMLElement) =>
    h('div', { class: 'field', 'data-option': name }, h('label', { for: id, title: s.description ?? '' }, `${name}${unit}`), input, h('small', { class: 'muted' }, s.description ?? ''));
  if (s.type === 'boolean') {
    const box = h('input', { id, type: 'checkbox', checked: s.default === true }) as HTMLInputElement;
    return { el: label(box), read: () => (box.checked === (s.default === true) ? undefined : box.checked) };
  }
  if (s.enum) {
    const sel = h('select', { id }, h('option', { value: '' }, `(default: ${s.default ?? 'none'})`), s.enum.map((c) => h('option', { value: c }, c))) as HTMLSelectElement;
    return { el: label(sel), read: () => sel.value || undefined };
  }
  if (s.type === 'number' || s.type === 'integer') {
    const min = s.minimum ?? s.exclusiveMinimum;
    const input = h('input', { id, type: 'number', step: s.type === 'integer' ? '1' : 'any', min: min == null ? undefined : String(min), placeholder: s.default == null ? 'from the data' : String(s.default) }) as HTMLInputElement;
    return { el: label(input), read: () => (input.value.trim() === '' ? undefined : Number(input.value)) };
  }
  // Offsets (true, false or a number), objects and name lists: JSON as typed.
  const input = h('input', { id, type: 'text', spellcheck: 'false', placeholder: s.default == null ? '(JSON)' : JSON.stringify(s.default) }) as HTMLInputElement;
  return {
    el: label(input),
    read: () => {
      const text = input.value.trim();
      if (!text) return undefined;
      try {
        return JSON.parse(text);
      } catch {
        // A bare name list (`fc, fs`) is a string the procedure splits.
        if (Array.isArray(s.anyOf)) return text;
        throw new ApiError(0, `${proc}: ${name} is not valid JSON (${text})`, `given.${name}`);
      }
    },
  };
}

/** The held-out scores of the answer (`validation`: rms, rel_error_pct, r2, n per record). */
export function validationTable(rows: ValidationRow[]): HTMLElement {
  const el = dataTable(
    rows.map((v) => ({ record: v.record, rms: fmt(v.rms), rel_error_pct: fmt(v.rel_error_pct), r2: fmt(v.r2), n: v.n, compared: v.compared })),
    ['record', 'rms', 'rel_error_pct', 'r2', 'n', 'compared'],
    'Held-out validation',
  );
  el.dataset.testid = 'fit-validation';
  return el;
}

/**
 * The form: run, model, the procedures that apply, their options, held-out runs, known values;
 * `done` gets the answer of `POST /api/fits`.
 */
export async function fitForm(box: HTMLElement, models: ModelInfo[], runs: RunSummary[], done: (answer: Schemas['Fitted'], result: HTMLElement) => void) {
  const msg = notice();
  msg.id = 'fit-notice';
  const procs: ProcedureInfo[] = await get<ProcedureInfo[]>('/api/procedures').catch((e) => {
    msg.show(`procedures: ${(e as Error).message}`, 'error');
    return [];
  });
  const kindOf = new Map(runs.map((r) => [String(r.id), r.kind]));
  const runOption = (r: RunSummary) => h('option', { value: String(r.id), 'data-kind': r.kind }, `#${r.id} ${r.kind} — ${r.name}`);
  const run = h('select', { id: 'fit-run' }, runs.map(runOption)) as HTMLSelectElement;
  const model = h('select', { id: 'fit-model' }, models.map((m) => h('option', { value: m.id, selected: m.id === 'stribeck_exp' }, m.id))) as HTMLSelectElement;
  const proc = h('select', { id: 'fit-procedure' }) as HTMLSelectElement;
  const optionsBox = h('fieldset', { id: 'fit-options' });
  const held = h('select', { id: 'fit-validate', multiple: true, size: 4 }, runs.map(runOption)) as HTMLSelectElement;
  const given = h('input', { id: 'fit-given', type: 'text', value: '{}', spellcheck: 'false' }) as HTMLInputElement;
  const name = h('input', { id: 'fit-name', type: 'text', placeholder: '(default <model>-run<ID>-<procedure>)' }) as HTMLInputElement;
  const result = h('div', { id: 'fit-result' });
  let fields: Record<string, OptionField> = {};
  const showOptions = () => {
    const p = procs.find((x) => x.id === proc.value);
    fields = {};
    for (const [k, s] of Object.entries(p?.options.properties ?? {})) fields[k] = optionField(proc.value, k, s);
    clear(optionsBox, h('legend', null, p ? `Options of ${p.id}` : 'Options'), Object.values(fields).map((f) => f.el));
    if (!Object.keys(fields).length) optionsBox.append(h('p', { class: 'muted' }, 'This procedure takes no options.'));
  };
  let asked = 0;
  const showProcedures = async () => {
    const ask = ++asked;
    const kind = kindOf.get(run.value) ?? '';
    const columns = kind === 'imported' ? await columnsOf(run.value).catch(() => null) : null;
    // A later choice answered first: this one is stale.
    if (ask !== asked) return;
    const offered = applicable(procs, kind, model.value, columns);
    const keep = offered.some((p) => p.id === proc.value) ? proc.value : offered[0]?.id;
    clear(proc, offered.length ? offered.map((p) => h('option', { value: p.id, selected: p.id === keep }, p.id)) : h('option', { value: '', disabled: true }, '(none reads this run for this model)'));
    // Which choice the list answers (a test or a script waits for it).
    Object.assign(proc.dataset, { run: run.value, model: model.value });
    showOptions();
  };
  run.addEventListener('change', showProcedures);
  model.addEventListener('change', showProcedures);
  proc.addEventListener('change', showOptions);
  await showProcedures();
  const form = h(
    'form',
    { id: 'fit-form', novalidate: true },
    h('h2', { id: 'fit-h' }, 'Fit a model on a run'),
    field(run, 'Run'),
    field(model, 'Model'),
    field(proc, 'Procedure (those that read this run and fit this model)'),
    optionsBox,
    field(held, 'Held-out runs (optional: the fitted set is scored on them)'),
    field(given, 'Known values held fixed, and more options (JSON)'),
    field(name, 'Name of the parameter set'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Fit')),
    msg,
    result,
  );
  box.replaceChildren(form);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let g: Record<string, unknown>;
    try {
      g = JSON.parse(given.value || '{}');
      for (const [k, f] of Object.entries(fields)) {
        const v = f.read();
        if (v !== undefined) g[k] = v;
      }
    } catch (e) {
      const x = e as ApiError;
      msg.show(x.field ? x.message : `given: not valid JSON (${x.message})`, 'error');
      return;
    }
    const validate = Array.from(held.selectedOptions).map((o) => Number(o.value));
    msg.show('fitting…');
    try {
      const r = await post<Schemas['Fitted']>('/api/fits', { model: model.value, procedure: proc.value, run: Number(run.value), given: g, name: name.value.trim() || undefined, validate: validate.length ? validate : undefined });
      msg.show(`saved as parameter set #${r.parameter_set_id}`);
      done(r, result);
    } catch (e) {
      const x = e as ApiError;
      msg.show(`${x.field ? x.field + ': ' : ''}${x.message}`, 'error');
    }
  });
}
