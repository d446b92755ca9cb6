// Models & fits: browse the models and parameter sets, fit on chosen runs, compare models.
import { get, post, qs, ApiError, RunSummary, type Schemas } from '../api';
import type { ByParam, FitReport, ModelInfo, ParameterSet } from '../answers';
import { fitForm, validationTable } from './fitform';
import { h, clear, fmt, kvTable, dataTable, notice, field } from '../dom';
import { answered, comparisonTable } from './comparison';
import { timeChart } from '../timeseries';

export function modelsPage(root: HTMLElement): () => void {
  const modelsBox = h('section', { class: 'card', 'aria-labelledby': 'models-h' });
  const setsBox = h('section', { class: 'card', 'aria-labelledby': 'sets-h' });
  const fitBox = h('section', { class: 'card', 'aria-labelledby': 'fit-h' });
  const cmpBox = h('section', { class: 'card', 'aria-labelledby': 'cmp2-h' });
  root.append(h('h1', null, 'Models & fits'), h('div', { class: 'grid2' }, fitBox, cmpBox), setsBox, modelsBox);

  let models: ModelInfo[] = [];
  const modelSel = h('select', { id: 'sets-model' }, h('option', { value: '' }, 'all models'));
  const setsList = h('div', { id: 'sets-list' });
  const loadSets = async () => {
    try {
      const sets = await get<ParameterSet[]>(`/api/parameter-sets${qs({ model: modelSel.value })}`);
      clear(
        setsList,
        sets.length
          ? h(
              'table',
              { class: 'data' },
              h('thead', null, h('tr', null, ['id', 'name', 'model', 'created', 'procedure', 'verdict', 'runs', 'parameters'].map((c) => h('th', { scope: 'col' }, c)))),
              h(
                'tbody',
                null,
                sets.map((s) =>
                  h(
                    'tr',
                    null,
                    h('td', null, String(s.id)),
                    h('td', null, s.name),
                    h('td', null, s.model_id),
                    h('td', null, s.created_at),
                    h('td', null, s.provenance?.procedure ?? s.provenance?.method ?? '—'),
                    h('td', { title: (s.provenance?.verdict?.reasons ?? []).join('\n') }, s.provenance?.verdict?.status ?? '—'),
                    h('td', null, (s.provenance?.runs ?? []).map((r: number) => h('a', { href: `#/runs/${r}` }, `#${r} `))),
                    h('td', null, h('details', null, h('summary', null, 'show'), h('pre', null, JSON.stringify(s.params, null, 2)))),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, 'No parameter sets.'),
      );
    } catch (e) {
      clear(setsList, h('p', { class: 'bad' }, (e as Error).message));
    }
  };
  modelSel.addEventListener('change', loadSets);
  setsBox.append(h('h2', { id: 'sets-h' }, 'Parameter sets'), field(modelSel, 'Model'), setsList);

  get<ModelInfo[]>('/api/models').then(
    (m) => {
      models = m;
      for (const x of models) modelSel.append(h('option', { value: x.id }, x.id));
      clear(
        modelsBox,
        h('h2', { id: 'models-h' }, `Models (${models.length})`),
        models.map((x) =>
          h(
            'details',
            { class: 'model' },
            h('summary', null, h('strong', null, x.id), ` — ${x.description ?? ''}${x.asymmetric ? ' (asymmetric)' : ''}`),
            dataTable((x.params ?? []).map((p) => ({ name: p.name, unit: p.bench_unit ?? p.unit, default: p.default, description: p.description }))),
          ),
        ),
      );
      completedRuns().then((runs) => fitForm(fitBox, models, runs, showFit(models, loadSets)));
      compareForm(cmpBox, models);
    },
    (e) => clear(modelsBox, h('p', { class: 'bad' }, e.message)),
  );
  loadSets();
  return () => {};
}

async function completedRuns(): Promise<RunSummary[]> {
  const page = await get<{ runs: RunSummary[] }>(`/api/runs${qs({ status: 'completed', limit: 200 })}`).catch(() => ({ runs: [] as RunSummary[] }));
  return page.runs;
}

function runOptions(runs: RunSummary[]) {
  return runs.map((r) => h('option', { value: String(r.id) }, `#${r.id} ${r.kind} — ${r.name}`));
}

/** The answer of a fit: its report, the replay on the fitted data, the held-out scores. */
function showFit(models: ModelInfo[], after: () => void) {
  return (r: Schemas['Fitted'], result: HTMLElement) => {
    const rep: FitReport = (r.report as FitReport | undefined) ?? {};
    clear(result, fitReport(rep, models));
    const replay = rep.details?.replay;
    // The force unit of this bench, as the registry's bench units give it.
    if (replay?.t?.length) result.append(replayChart(replay, unitOf(models, 'coulomb_viscous', 'fc') || 'N m'));
    if (rep.validation?.length) result.append(validationTable(rep.validation));
    after();
  };
}

/**
 * The stored set replayed on the time series it was fitted to (velocity-driven): its friction
 * against the measured torque, on the measurement's scale.
 */
function replayChart(replay: NonNullable<NonNullable<FitReport['details']>['replay']>, force: string): HTMLElement {
  const el = h('div', { class: 'chart', 'data-testid': 'fit-replay' });
  const wrap = h('div', null, h('h3', null, 'The fitted set on the fitted data'), el);
  const c = timeChart(el, 'Measured friction and the fitted model', `friction [${force}]`, ['measured', 'model'], 620, 220, 1);
  c.set([replay.t, replay.measured, replay.model]);
  return wrap;
}

/** A parameter's unit on this bench (`bench_unit` from /api/models, else the SI unit). */
function unitOf(models: ModelInfo[], model: string, name: string): string {
  if (name === 'mass') return '';
  const p = (models.find((m) => m.id === model)?.params ?? []).find((p) => p.name === name);
  const u = p?.bench_unit ?? p?.unit ?? '';
  return u === '-' ? '' : u;
}

/** The fitted values with std errors, the fit's quality and its verdict (`bench fit --json`). */
export function fitReport(rep: FitReport, models: ModelInfo[]): HTMLElement {
  const params = rep.params ?? {};
  const se = rep.std_errors ?? {};
  const rel = rep.relative_std_errors ?? {};
  const model = rep.provenance?.model ?? '';
  const num = (x: unknown) => (typeof x === 'number' ? x : null);
  const rows = (p: ByParam | undefined, e: ByParam | undefined, r: ByParam | undefined, prefix: string) =>
    Object.entries(p ?? {})
      .filter(([, v]) => typeof v === 'number' || (Array.isArray(v) && v.every((x) => typeof x === 'number')))
      .map(([k, v]) => ({
        parameter: `${prefix}${k}`,
        // Element arrays (GMS k, alpha) as a list.
        value: Array.isArray(v) ? v.map((x: number) => Number(x.toPrecision(4))).join(', ') : v,
        unit: unitOf(models, model, k),
        std_error: num(e?.[k]),
        'std error %': ((x) => (x === null ? null : Number((100 * x).toPrecision(3))))(num(r?.[k])),
        'at bound': (rep.at_bound ?? []).includes(`${prefix}${k}`) ? 'yes' : '',
      }));
  const v = rep.verdict ?? { status: 'ok', reasons: [] };
  const verdict = h(
    'div',
    { class: v.status === 'ok' ? 'ok' : 'bad', 'data-testid': 'fit-verdict', role: 'status' },
    h('strong', null, v.status === 'ok' ? 'Verdict: ok' : 'Verdict: WARNING'),
    v.reasons?.length ? h('ul', null, v.reasons.map((x: string) => h('li', null, x))) : null,
  );
  return h(
    'div',
    null,
    verdict,
    dataTable(
      [...rows(params, se, rel, ''), ...rows(params.negative, se.negative, rel.negative, 'negative.')],
      ['parameter', 'value', 'unit', 'std_error', 'std error %', 'at bound'],
      'Fitted parameters',
    ),
    kvTable([
      ['mse', fmt(rep.mse)],
      ['termination', rep.termination ?? rep.provenance?.termination ?? '—'],
      ['at bound', (rep.at_bound ?? []).join(', ') || 'none'],
      ['condition (scaled JᵀJ)', fmt(rep.condition)],
      ['points', fmt(rep.provenance?.n_points)],
    ]),
    h('details', null, h('summary', null, 'Full report'), h('pre', null, JSON.stringify(rep, null, 2))),
  );
}

async function compareForm(box: HTMLElement, models: ModelInfo[]) {
  const msg = notice();
  const runs = await completedRuns();
  const est = h('select', { id: 'cmp-estimate', multiple: true, size: 5 }, runOptions(runs));
  const val = h('select', { id: 'cmp-validate', multiple: true, size: 5 }, runOptions(runs));
  const mods = h('select', { id: 'cmp-models', multiple: true, size: 6 }, models.map((m) => h('option', { value: m.id, selected: m.id === 'lugre' || m.id === 'coulomb_viscous' }, m.id)));
  const result = h('div');
  const form = h(
    'form',
    { id: 'compare-form', novalidate: true },
    h('h2', { id: 'cmp2-h' }, 'Compare models'),
    field(est, 'Estimation runs'),
    field(val, 'Validation runs'),
    field(mods, 'Models'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Compare')),
    msg,
    result,
  );
  box.replaceChildren(form);
  const sel = (s: HTMLSelectElement) => Array.from(s.selectedOptions).map((o) => o.value);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    msg.show('fitting and scoring…');
    try {
      const body = { estimate: sel(est).map(Number), validate: sel(val).map(Number), models: sel(mods) };
      const r = await post<Schemas['Compared']>('/api/comparisons', body);
      msg.show(`comparison ${r.comparison_id} stored`);
      clear(result, comparisonTable({ ...answered(r), estimate_runs: body.estimate, validate_runs: body.validate }));
    } catch (e) {
      const x = e as ApiError;
      msg.show(`${x.field ? x.field + ': ' : ''}${x.message}`, 'error');
    }
  });
}
