// Characterisation campaigns (`bench characterise`): a form that starts one on this bench
// (POST /api/campaigns), the list, and one campaign's steps with their runs (linked to the run
// pages), its answer and its report (GET /api/campaigns/{id}/report) in a frame. A campaign
// still running is polled every 2 s and has a Stop button (POST /api/campaigns/{id}/stop).
import { ApiError, get, post, withToken } from '../api';
import type { CampaignRecord } from '../answers';
import { h, clear, dataTable, fmt, duration, notice } from '../dom';

/** `#/characterise`: the campaigns, newest first. */
export function characterisePage(root: HTMLElement): void {
  const msg = notice();
  const list = h('div', { id: 'campaigns' });
  root.append(
    h('h1', null, 'Characterise'),
    h('p', null, 'A campaign takes this bench from unknown to its friction model, its compensation and a report (as ', h('code', null, 'bench characterise'), ').'),
    startForm(),
    msg,
    list,
  );
  get<CampaignRecord[]>('/api/campaigns')
    .then((cs) => {
      if (!cs.length) return msg.show('No campaign yet: start one above, or run bench characterise.');
      const rows = cs.map((c) => ({
        campaign: h('a', { href: `#/characterise/${c.id}` }, `campaign ${c.id}`),
        created: c.created_at,
        status: c.status,
        models: (c.request?.models ?? []).join(', '),
        answer: c.answer?.text ?? c.reason ?? '',
      }));
      list.append(dataTable(rows, undefined, 'Campaigns, newest first'));
    })
    .catch((e) => msg.show((e as Error).message, 'error'));
}

const MODELS = ['coulomb_viscous', 'stribeck_exp', 'lugre', 'gms'];

/** The start form: models and the bench-time budget, said before it starts. */
function startForm(): HTMLElement {
  const msg = notice();
  const boxes = MODELS.map((m) => h('input', { type: 'checkbox', id: `camp-model-${m}`, value: m, checked: true }) as HTMLInputElement);
  const budget = h('input', { type: 'number', id: 'camp-budget', min: '0.01', max: '1440', step: 'any', value: '20', 'aria-describedby': 'camp-estimate' }) as HTMLInputElement;
  const estimate = h('p', { id: 'camp-estimate' });
  const say = () => {
    estimate.textContent = `It uses at most ${budget.value || '?'} min of bench time: seven steps, each designed from what the steps before it measured, run through the queue ahead of waiting runs; a step that would run past the budget is not started.`;
  };
  budget.addEventListener('input', say);
  say();
  const start = async (ev: Event) => {
    ev.preventDefault();
    const models = boxes.filter((b) => b.checked).map((b) => b.value);
    try {
      const c = await post<{ id: number }>('/api/campaigns', { models, budget_min: Number(budget.value) });
      location.hash = `#/characterise/${c.id}`;
    } catch (e) {
      const err = e as ApiError;
      msg.show(err.message, 'error');
    }
  };
  return h(
    'form',
    { class: 'card', id: 'campaign-start', onsubmit: start },
    h('h2', null, 'Start a campaign'),
    h('fieldset', null, h('legend', null, 'Models to fit and compare'), ...boxes.flatMap((b) => [b, h('label', { for: b.id }, ` ${b.value} `)])),
    h('label', { for: 'camp-budget' }, 'Bench-time budget [min] '),
    budget,
    estimate,
    h('button', { type: 'submit', id: 'camp-start' }, 'Start the campaign'),
    msg,
  );
}

/** `#/characterise/ID`: one campaign, polled while it runs. */
export function campaignPage(root: HTMLElement, id?: string): () => void {
  const msg = notice();
  const body = h('div', { id: 'campaign' });
  root.append(h('h1', null, `Campaign ${id}`), msg, body);
  let timer: number | undefined;
  const load = async () => {
    window.clearTimeout(timer);
    try {
      const c = await get<CampaignRecord>(`/api/campaigns/${id}`);
      show(body, c, msg, load);
      if (c.status === 'running') timer = window.setTimeout(load, 2000);
    } catch (e) {
      msg.show((e as Error).message, 'error');
    }
  };
  load();
  return () => window.clearTimeout(timer);
}

/** The Stop button of a running campaign: its step's run aborted, the campaign ended `stopped`. */
function stopButton(id: number, msg: ReturnType<typeof notice>, reload: () => void): HTMLElement {
  const button = h('button', { type: 'button', id: 'campaign-stop' }, 'Stop the campaign') as HTMLButtonElement;
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await post(`/api/campaigns/${id}/stop`, undefined);
    } catch (e) {
      msg.show((e as Error).message, 'error');
    }
    reload();
  });
  return button;
}

function show(body: HTMLElement, c: CampaignRecord, msg: ReturnType<typeof notice>, reload: () => void): void {
  const steps = (c.steps ?? []).map((s) => ({
    step: s.name,
    status: s.status,
    run: s.run_id ? h('a', { href: `#/runs/${s.run_id}` }, `run ${s.run_id}`) : '',
    'bench time': duration(s.bench_time_s),
  }));
  if (c.trial_run_id) {
    const t = c.answer?.trial ?? {};
    steps.push({ step: 'trial', status: t.status ?? 'completed', run: h('a', { href: `#/runs/${c.trial_run_id}` }, `run ${c.trial_run_id}`), 'bench time': duration(t.bench_time_s) });
  }
  const done = c.status === 'completed';
  const report = withToken(`/api/campaigns/${c.id}/report`);
  clear(
    body,
    h('p', { id: 'campaign-status' }, `Status: ${c.status}`, c.reason ? ` — ${c.reason}` : ''),
    c.status === 'running' ? h('p', null, 'Its step on the bench now, with the live plots: ', h('a', { href: '#/bench' }, 'Bench page'), '. ', stopButton(c.id, msg, reload)) : null,
    c.status === 'interrupted' ? h('p', { id: 'campaign-interrupted' }, 'Nothing runs it now: continue it from the command line as its reason says (the steps it completed are kept).') : null,
    c.answer?.text ? h('p', { id: 'campaign-answer', class: 'answer' }, c.answer.text) : null,
    c.answer?.bench_time_s != null ? h('p', null, `Bench time ${fmt(c.answer.bench_time_s, 3)} s`) : null,
    dataTable(steps, undefined, 'Steps and their runs'),
    h('p', null, h('a', { id: 'campaign-report', href: report, target: '_blank' }, 'Open the report')),
    done ? h('iframe', { id: 'campaign-report-frame', src: report, title: `Report of campaign ${c.id}`, style: 'width:100%;height:80vh;border:1px solid #ccc' }) : null,
  );
}
