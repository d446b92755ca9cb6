// Launch: a form per experiment kind, duration estimate, start now or enqueue.
import { get, post, qs, ApiError, type Schemas } from '../api';
import { h, duration, notice, field } from '../dom';
import { normaliseKinds, specForm, SpecForm } from '../specform';
import { presetPicker } from '../presetpicker';

export function launchPage(root: HTMLElement): () => void {
  const msg = notice();
  msg.id = 'launch-result';
  root.append(h('h1', null, 'Launch an experiment'));
  const holder = h('div', null, h('p', { class: 'muted' }, 'loading the experiment kinds…'));
  root.append(holder);
  let timer: number | undefined;
  let alive = true;

  get<Schemas['Kinds']>('/api/experiments/kinds').then(
    (raw) => {
      if (!alive) return;
      const kinds = normaliseKinds(raw);
      const initial = kinds.find((k) => k.kind === 'constant_velocity_sweep')?.kind ?? kinds[0]?.kind;
      const f = specForm(kinds, 'launch', initial);
      // The page opens on the first shipped quick spec (the README's 32 s sweep), not on the
      // kind's defaults (the paper's full sweep, hours long).
      const presets = presetPicker('launch', f);
      const estimate = h('p', { id: 'launch-estimate', role: 'status', 'aria-live': 'polite', class: 'estimate' });
      const priority = h('input', { id: 'launch-priority', type: 'number', value: '0', step: '1' });
      const startNow = h('button', { type: 'submit', id: 'launch-start', class: 'primary', value: 'now' }, 'Start now');
      const enqueue = h('button', { type: 'submit', id: 'launch-enqueue', value: 'enqueue' }, 'Enqueue');
      const form = h(
        'form',
        { id: 'launch-form', novalidate: true, 'aria-label': 'Experiment spec' },
        presets,
        f.el,
        estimate,
        field(priority, 'Priority (higher runs first)'),
        h('div', { class: 'actions' }, startNow, enqueue),
        msg,
      );
      holder.replaceChildren(form);
      // Only the latest check may update the page: the answer to an older one (the spec has
      // changed since, or the form was submitted) is dropped.
      let checks = 0;
      const check = () => {
        const seq = ++checks;
        return checkSpec(f, estimate, () => seq !== checks);
      };
      f.onChange(() => {
        // A refusal is about the spec as it was: editing makes it stale.
        if (msg.classList.contains('error')) {
          msg.replaceChildren();
          msg.className = 'notice';
        }
        clearTimeout(timer);
        timer = window.setTimeout(check, 300);
      });
      check();
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const now = (ev as SubmitEvent).submitter === startNow;
        checks++;
        f.clearErrors();
        let spec: Record<string, unknown>;
        try {
          spec = f.spec();
        } catch (e) {
          msg.show((e as Error).message, 'error');
          return;
        }
        try {
          // Over an hour of bench time is asked for once more before it is committed.
          const est = await post<Schemas['Checked']>('/api/experiments/check', spec);
          if (est.estimate_s > LONG_RUN_S && !window.confirm(`This run is estimated to take ${duration(est.estimate_s)}. ${now ? 'Start' : 'Queue'} it?`)) {
            msg.show('Not started: the long run was not confirmed.', 'error');
            return;
          }
          const r = await post<Schemas['Enqueued']>(`/api/runs${qs({ start: now ? 'now' : undefined, priority: priority.value || undefined })}`, spec);
          msg.replaceChildren(
            `Run #${r.id} ${r.status}`,
            r.status === 'queued' ? ` at position ${r.position}, starts in about ${duration(r.eta_s)}` : '',
            '. ',
            h('a', { href: `#/runs/${r.id}` }, 'Open the run'),
            ' · ',
            h('a', { href: '#/bench' }, 'watch it live'),
          );
          msg.className = 'notice ok';
          msg.dataset.runId = String(r.id);
        } catch (e) {
          const err = e as ApiError;
          f.showError(err.field, err.message);
          msg.show(`Not started: ${err.message}`, 'error');
          delete msg.dataset.runId;
        }
      });
    },
    (e) => holder.replaceChildren(h('p', { class: 'bad' }, `cannot load the experiment kinds: ${e.message}`)),
  );
  return () => {
    alive = false;
    clearTimeout(timer);
  };
}

/** Launches estimated longer than this [s] ask for a confirmation first. */
const LONG_RUN_S = 3600;

/** Duration estimate through `POST /api/experiments/check`; errors go beside their field,
 * unless `stale()` says a newer check or a submit has superseded this one by then. */
export async function checkSpec(f: SpecForm, out: HTMLElement, stale: () => boolean) {
  let spec: Record<string, unknown>;
  try {
    spec = f.spec();
  } catch (e) {
    out.textContent = (e as Error).message;
    return;
  }
  try {
    const r = await post<Schemas['Checked']>('/api/experiments/check', spec);
    if (stale()) return;
    f.clearErrors();
    out.textContent = `Estimated duration ${duration(r.estimate_s)}${r.max_s != null ? ` (at most ${duration(r.max_s)})` : ''}${r.segments != null ? `, ${r.segments} segments` : ''}.`;
    out.className = 'estimate ok';
  } catch (e) {
    if (stale()) return;
    const err = e as ApiError;
    f.clearErrors();
    f.showError(err.field, err.message);
    out.textContent = `Cannot run as set: ${err.message}`;
    out.className = 'estimate error';
  }
}
