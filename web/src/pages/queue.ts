// Queue & schedule: reorder, remove, ETA per item and total; plan an overnight sweep.
import { get, put, del, post, Queue, ApiError, type Schemas } from '../api';
import { h, clear, duration, notice, fmt, field } from '../dom';
import { live } from '../live';
import { normaliseKinds, specForm, SpecForm, type KindDoc } from '../specform';

/** Waiting runs the page lists (the count and the ETA cover them all). */
const LISTED = 200;

export function queuePage(root: HTMLElement): () => void {
  const msg = notice();
  msg.id = 'queue-notice';
  const queueBox = h('section', { class: 'card', 'aria-labelledby': 'queue-h', id: 'queue' });
  const schedBox = h('section', { class: 'card', 'aria-labelledby': 'sched-list-h', id: 'schedule' });
  const planBox = h('section', { class: 'card', 'aria-labelledby': 'plan-h' });
  root.append(h('h1', null, 'Queue & schedule'), msg, queueBox, schedBox, planBox);

  let q: Queue | null = null;
  const showQueue = (queue: Queue) => {
    q = queue;
    const sorted = [...queue.items].sort((a, b) => a.position - b.position);
    const items = sorted.slice(0, LISTED);
    const waiting = queue.waiting ?? sorted.length;
    const truncated = items.length < waiting;
    const move = async (from: number, to: number) => {
      // A long queue is listed in part; a new order names every waiting run.
      const all: Queue = truncated ? await get('/api/queue') : queue;
      const o = [...all.items].sort((a, b) => a.position - b.position).map((i) => i.run_id);
      const [x] = o.splice(from, 1);
      o.splice(to, 0, x);
      try {
        showQueue(await put('/api/queue', { order: o }));
        msg.show(`run #${x} moved to position ${to + 1}`);
        (document.getElementById(`q-${to > from ? 'down' : 'up'}-${x}`) as HTMLElement | null)?.focus();
      } catch (e) {
        msg.show((e as ApiError).message, 'error');
      }
    };
    const paused = h('input', { type: 'checkbox', id: 'queue-paused', checked: queue.paused });
    paused.addEventListener('change', async () => {
      try {
        showQueue(await put('/api/queue', { paused: paused.checked }));
      } catch (e) {
        msg.show((e as ApiError).message, 'error');
      }
    });
    const onFail = h('select', { id: 'queue-on-failure' }, ['continue', 'stop'].map((v) => h('option', { value: v, selected: queue.on_failure === v }, v)));
    onFail.addEventListener('change', async () => {
      try {
        showQueue(await put('/api/queue', { on_failure: onFail.value }));
      } catch (e) {
        msg.show((e as ApiError).message, 'error');
      }
    });
    clear(
      queueBox,
      h('h2', { id: 'queue-h' }, 'Queue'),
      h(
        'div',
        { class: 'row' },
        h('label', null, paused, ' paused'),
        h('label', { for: onFail.id }, 'on failure '),
        onFail,
        h('span', { id: 'queue-total' }, queue.paused
            ? `${waiting} waiting; paused: nothing starts until the queue is resumed`
            : `${waiting} waiting, all done in about ${duration(queue.eta_total_s)}`),
      ),
      queue.running
        ? h('p', { id: 'queue-running' }, 'Running: ', h('a', { href: `#/runs/${queue.running.run_id}` }, `#${queue.running.run_id}`), ` ${queue.running.kind} “${queue.running.name}”, about ${duration(queue.running.remaining_s)} left`)
        : null,
      queue.estop ? h('p', { class: 'bad' }, 'E-stop latched: the queue waits until it is reset (Bench page).') : null,
      items.length
        ? h(
            'table',
            { class: 'data', id: 'queue-table' },
            h('caption', { class: 'sr-only' }, 'Waiting runs in start order'),
            h('thead', null, h('tr', null, ['#', 'run', 'kind', 'name', 'priority', 'duration', 'starts in', 'done in', 'actions'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              null,
              items.map((it, i) =>
                h(
                  'tr',
                  { 'data-run-id': String(it.run_id) },
                  h('td', null, String(it.position)),
                  h('td', null, h('a', { href: `#/runs/${it.run_id}` }, `#${it.run_id}`)),
                  h('td', null, it.kind),
                  h('td', null, it.name),
                  h('td', null, String(it.priority)),
                  h('td', null, duration(it.estimate_s ?? (it.eta_s != null && it.starts_in_s != null ? it.eta_s - it.starts_in_s : null))),
                  h('td', null, queue.paused ? 'paused' : duration(it.starts_in_s)),
                  h('td', null, queue.paused ? 'paused' : duration(it.eta_s)),
                  h(
                    'td',
                    { class: 'actions' },
                    h('button', { type: 'button', id: `q-up-${it.run_id}`, disabled: i === 0, 'aria-label': `Move run ${it.run_id} up`, onclick: () => move(i, i - 1) }, '↑'),
                    h('button', { type: 'button', id: `q-down-${it.run_id}`, disabled: i === waiting - 1, 'aria-label': `Move run ${it.run_id} down`, onclick: () => move(i, i + 1) }, '↓'),
                    h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `Remove run ${it.run_id} from the queue`,
                        onclick: async () => {
                          try {
                            await del(`/api/queue/${it.run_id}`);
                            msg.show(`run #${it.run_id} removed from the queue`);
                            refresh();
                          } catch (e) {
                            msg.show((e as ApiError).message, 'error');
                          }
                        },
                      },
                      'Remove',
                    ),
                  ),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted', id: 'queue-empty' }, 'The queue is empty.'),
      truncated ? h('p', { class: 'muted', id: 'queue-more' }, `The first ${items.length} of ${waiting} waiting runs are listed.`) : null,
    );
  };

  const showSchedule = (entries: Schemas['Entry'][]) => {
    clear(
      schedBox,
      h('h2', { id: 'sched-list-h' }, 'Scheduled'),
      entries.length
        ? h(
            'table',
            { class: 'data', id: 'schedule-table' },
            h('thead', null, h('tr', null, ['id', 'what', 'run at', 'recurrence', 'next', 'priority', 'state', 'last started', ''].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              null,
              entries.map((e) =>
                h(
                  'tr',
                  { 'data-schedule-id': String(e.id) },
                  h('td', null, String(e.id)),
                  h('td', null, describe(e)),
                  h('td', null, e.run_at ?? '—'),
                  h('td', null, e.recurrence ?? 'once'),
                  h('td', null, e.next_run_at ?? '—'),
                  h('td', null, fmt(e.priority)),
                  h('td', null, e.state ?? '—', e.last_error ? h('span', { class: 'bad' }, ` — ${e.last_error}`) : null),
                  h('td', null, lastStarted(e)),
                  h(
                    'td',
                    null,
                    h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `Delete schedule entry ${e.id}`,
                        onclick: async () => {
                          try {
                            await del(`/api/schedule/${e.id}`);
                            refresh();
                          } catch (err) {
                            msg.show((err as ApiError).message, 'error');
                          }
                        },
                      },
                      'Delete',
                    ),
                  ),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted', id: 'schedule-empty' }, 'Nothing scheduled.'),
    );
  };

  const refresh = () => {
    get<Queue>(`/api/queue?limit=${LISTED}`).then(showQueue, (e) => clear(queueBox, h('p', { class: 'bad' }, e.message)));
    get<Schemas['Entry'][]>('/api/schedule').then(
      (s) => showSchedule(s),
      (e) => clear(schedBox, h('p', { class: 'bad' }, e.message)),
    );
  };
  refresh();

  get<Schemas['Kinds']>('/api/experiments/kinds').then((raw) => planForm(planBox, normaliseKinds(raw), msg, refresh), (e) => clear(planBox, h('p', { class: 'bad' }, e.message)));

  const off = live.on((ev, d) => {
    if (ev === 'queue' && d && Array.isArray(d.items)) showQueue(d);
    else if (ev === 'queue' || ev === 'run') refresh();
  });
  const tick = window.setInterval(refresh, 5000);
  return () => {
    off();
    clearInterval(tick);
    void q;
  };
}

function describe(e: Schemas['Entry']): string {
  if (e.spec) return `${e.spec.kind}${e.spec.name ? ` “${e.spec.name}”` : ''}`;
  if (Array.isArray(e.batch)) return `batch of ${e.batch.length}: ${e.batch.map((s) => s.kind).join(', ')}`;
  if (e.sweep) return `${e.sweep.spec?.kind} with ${e.sweep.param} over [${(e.sweep.values ?? []).map((v) => JSON.stringify(v)).join(', ')}]`;
  if (e.campaign) return `characterisation campaign (${(e.campaign.models ?? ['all four models']).join(', ')}; at most ${e.campaign.budget_min ?? 20} min)`;
  return JSON.stringify(e);
}

/** The last run an entry queued, or the last campaign it started. */
function lastStarted(e: Schemas['Entry']): HTMLElement | string {
  if (e.last_campaign_id != null) return h('a', { href: `#/characterise/${e.last_campaign_id}` }, `campaign ${e.last_campaign_id}`);
  if (e.last_run_id != null) return h('a', { href: `#/runs/${e.last_run_id}` }, `#${e.last_run_id}`);
  return '—';
}

/** Local `datetime-local` value → RFC 3339 UTC. */
function toRfc3339(local: string): string {
  return new Date(local).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The body of `POST /api/schedule` the plan form builds (its specs as the form or the JSON typed them). */
type PlanBody = Record<string, unknown> & { run_at: string };

function planForm(box: HTMLElement, kinds: KindDoc[], msg: ReturnType<typeof notice>, refresh: () => void) {
  const f: SpecForm = specForm(kinds, 'plan', 'constant_velocity_sweep');
  const tonight = new Date();
  tonight.setHours(22, 0, 0, 0);
  if (tonight.getTime() < Date.now()) tonight.setDate(tonight.getDate() + 1);
  const pad = (n: number) => String(n).padStart(2, '0');
  const localValue = `${tonight.getFullYear()}-${pad(tonight.getMonth() + 1)}-${pad(tonight.getDate())}T${pad(tonight.getHours())}:${pad(tonight.getMinutes())}`;
  const runAt = h('input', { id: 'plan-run-at', type: 'datetime-local', step: 1, value: localValue, required: true });
  const rec = h('select', { id: 'plan-recurrence' }, h('option', { value: '' }, 'once'), h('option', { value: 'nightly' }, 'nightly'), h('option', { value: 'weekly' }, 'weekly'));
  const prio = h('input', { id: 'plan-priority', type: 'number', value: '0', step: '1' });
  const mode = h('select', { id: 'plan-mode' }, h('option', { value: 'single' }, 'this spec once'), h('option', { value: 'sweep' }, 'this spec with one parameter varied over a list'), h('option', { value: 'batch' }, 'a batch of specs (JSON list)'));
  const sweepParam = h('input', { id: 'plan-sweep-param', type: 'text', value: 'params.velocities', spellcheck: 'false' });
  const sweepValues = h('input', { id: 'plan-sweep-values', type: 'text', placeholder: 'JSON list, e.g. [[0.1, 0.2], [0.5, 1]]', spellcheck: 'false' });
  const batch = h('textarea', { id: 'plan-batch', rows: 5, spellcheck: 'false', placeholder: '[{"kind": "torque_ramp", "params": {}}, {"kind": "constant_velocity_sweep", "params": {"repeats": 2}}]' });
  const err = h('p', { class: 'field-error', role: 'alert', id: 'plan-error', hidden: true });
  const preview = h('p', { id: 'plan-preview', role: 'status', 'aria-live': 'polite', class: 'estimate' });
  const sweepBox = h('div', { class: 'sweep', hidden: true }, field(sweepParam, 'Parameter to vary (path)'), field(sweepValues, 'Values (JSON list, one entry per run)'));
  const batchBox = h('div', { class: 'field', hidden: true }, h('label', { for: batch.id }, 'Specs (JSON list)'), batch);
  mode.addEventListener('change', () => {
    sweepBox.hidden = mode.value !== 'sweep';
    batchBox.hidden = mode.value !== 'batch';
    f.el.hidden = mode.value === 'batch';
  });
  const form = h(
    'form',
    { id: 'plan-form', novalidate: true },
    h('h2', { id: 'plan-h' }, 'Plan a run or an overnight sweep'),
    h('div', { class: 'row' }, field(runAt, 'Start at (local time)'), field(rec, 'Recurrence'), field(prio, 'Priority')),
    field(mode, 'What'),
    sweepBox,
    batchBox,
    f.el,
    preview,
    err,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'plan-submit', class: 'primary' }, 'Schedule')),
  );
  box.replaceChildren(form);
  /** The entry the form describes (throws on a list that is not JSON). */
  const entry = (): PlanBody => {
    const body: PlanBody = { run_at: toRfc3339(runAt.value), recurrence: rec.value || null, priority: Number(prio.value) || 0 };
    if (mode.value === 'batch') body.batch = JSON.parse(batch.value);
    else if (mode.value === 'sweep') body.sweep = { spec: f.spec(), param: sweepParam.value.trim(), values: JSON.parse(sweepValues.value) };
    else body.spec = f.spec();
    return body;
  };
  // What the plan runs, how long and until when, from the service (the same checks as the
  // entry's); only the latest answer is shown.
  let checks = 0;
  let timer = 0;
  const showPreview = async () => {
    const seq = ++checks;
    let body: PlanBody;
    try {
      body = entry();
    } catch {
      preview.textContent = '';
      return;
    }
    try {
      const p = await post<Schemas['Preview']>('/api/schedule/check', body);
      if (seq !== checks) return;
      preview.textContent = describePlan(p);
      preview.className = `estimate ${p.past ? 'error' : 'ok'}`;
    } catch (e) {
      if (seq !== checks) return;
      preview.textContent = `Cannot plan this: ${(e as ApiError).message}`;
      preview.className = 'estimate error';
    }
  };
  form.addEventListener('input', () => {
    clearTimeout(timer);
    timer = window.setTimeout(showPreview, 300);
  });
  form.addEventListener('change', () => {
    clearTimeout(timer);
    timer = window.setTimeout(showPreview, 300);
  });
  void showPreview();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    f.clearErrors();
    err.hidden = true;
    let body: PlanBody;
    try {
      body = entry();
    } catch (e) {
      err.textContent = `not valid JSON: ${(e as Error).message}`;
      err.hidden = false;
      return;
    }
    try {
      // Motion now, motion from a time already past, or over an hour of bench time is asked
      // for once more before it is committed.
      const p = await post<Schemas['Preview']>('/api/schedule/check', body);
      const ask = confirmation(p);
      if (ask && !window.confirm(ask)) {
        msg.show('Not scheduled: not confirmed.', 'error');
        return;
      }
      if (p.past) body.start_if_past = true;
      const made = await post<Schemas['Entry']>('/api/schedule', body);
      msg.show(`scheduled entry ${made.id ?? ''} for ${new Date(made.run_at ?? body.run_at).toLocaleString()}`);
      refresh();
    } catch (e) {
      const x = e as ApiError;
      if (x.field === 'run_at') {
        err.textContent = `Start at: ${x.message}`;
        err.hidden = false;
      } else if (!(mode.value !== 'batch' && f.showError(x.field, x.message))) {
        err.textContent = x.field ? `${x.field}: ${x.message}` : x.message;
        err.hidden = false;
      }
      msg.show(`not scheduled: ${x.message}`, 'error');
    }
  });
}

/** Plans that start within this [s] of now start "now" and ask first. */
const STARTS_NOW_S = 60;
/** Plans estimated longer than this [s] ask first, as Launch does. */
const LONG_PLAN_S = 3600;

/** "2 runs, about 5 h 33 min: from 28/11 22:00 to 29/11 03:33." */
function describePlan(p: Schemas['Preview']): string {
  const what = p.runs > 0 ? `${p.runs} run${p.runs === 1 ? '' : 's'}, about ${duration(p.estimate_s)}` : `a campaign of at most ${duration(p.estimate_s)}`;
  const span = `from ${new Date(p.run_at).toLocaleString()} to ${new Date(p.ends_at).toLocaleString()}`;
  const when = p.past
    ? ` The start time is ${duration(-p.starts_in_s)} in the past: scheduling it starts moving the bench now.`
    : p.starts_in_s < STARTS_NOW_S
      ? ' It starts moving the bench now.'
      : '';
  return `${what}: ${span}.${when}`;
}

/** The question to ask before scheduling `p`, or null when nothing needs asking. */
function confirmation(p: Schemas['Preview']): string | null {
  const parts: string[] = [];
  if (p.past) parts.push(`The start time (${new Date(p.run_at).toLocaleString()}) is ${duration(-p.starts_in_s)} in the past: the bench starts moving now.`);
  else if (p.starts_in_s < STARTS_NOW_S) parts.push('This starts moving the bench now.');
  if (p.estimate_s > LONG_PLAN_S) parts.push(`It runs for about ${duration(p.estimate_s)}, until ${new Date(p.ends_at).toLocaleString()}.`);
  return parts.length ? `${parts.join(' ')} Schedule it?` : null;
}
