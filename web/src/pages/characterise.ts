// Characterisation campaigns (`bench characterise`): the list, and one campaign's steps with
// their runs (linked to the run pages), its answer and its report (GET /api/campaigns/{id}/report)
// in a frame. A campaign still running is polled every 2 s.
import { get, withToken } from '../api';
import { h, clear, dataTable, fmt, duration, notice } from '../dom';

/** `#/characterise`: the campaigns, newest first. */
export function characterisePage(root: HTMLElement): void {
  const msg = notice();
  const list = h('div', { id: 'campaigns' });
  root.append(
    h('h1', null, 'Characterise'),
    h('p', null, 'Campaigns started with ', h('code', null, 'bench characterise'), ': from an unknown bench to its friction model, its compensation and a report.'),
    msg,
    list,
  );
  get('/api/campaigns')
    .then((cs: any[]) => {
      if (!cs.length) return msg.show('No campaign yet: run bench characterise.');
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

/** `#/characterise/ID`: one campaign, polled while it runs. */
export function campaignPage(root: HTMLElement, id?: string): () => void {
  const msg = notice();
  const body = h('div', { id: 'campaign' });
  root.append(h('h1', null, `Campaign ${id}`), msg, body);
  let timer: number | undefined;
  const load = async () => {
    try {
      const c = await get(`/api/campaigns/${id}`);
      show(body, c);
      if (c.status === 'running') timer = window.setTimeout(load, 2000);
    } catch (e) {
      msg.show((e as Error).message, 'error');
    }
  };
  load();
  return () => window.clearTimeout(timer);
}

function show(body: HTMLElement, c: any): void {
  const steps = (c.steps ?? []).map((s: any) => ({
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
    c.answer?.text ? h('p', { id: 'campaign-answer', class: 'answer' }, c.answer.text) : null,
    c.answer?.bench_time_s != null ? h('p', null, `Bench time ${fmt(c.answer.bench_time_s, 3)} s`) : null,
    dataTable(steps, undefined, 'Steps and their runs'),
    h('p', null, h('a', { id: 'campaign-report', href: report, target: '_blank' }, 'Open the report')),
    done ? h('iframe', { id: 'campaign-report-frame', src: report, title: `Report of campaign ${c.id}`, style: 'width:100%;height:80vh;border:1px solid #ccc' }) : null,
  );
}
