// A run page's card for what people add after the fact and what they compare it with: its tags
// and notes, edited in place (PATCH /api/runs/{id}, operator; the audit log keeps the old
// values), and "compare with run N" (GET /api/runs/{id}/diff?with=N, as `bench runs diff`).
import { api, get } from '../api';
import type { RunDiff, RunTags } from '../answers';
import { h, dataTable, notice, field } from '../dom';

/** The card: tags and notes of `run`, saved on request; a comparison with another run. */
export function annotateCard(run: { id: number } & RunTags): HTMLElement {
  const card = h('section', { class: 'card', 'aria-labelledby': 'ann-h', id: 'run-annotations' }, h('h2', { id: 'ann-h' }, 'Tags, notes and what changed'));
  card.append(editForm(run), compareForm(run));
  return card;
}

/** Tags (space separated) and notes; Save sends both, replacing what the run had. */
function editForm(run: { id: number } & RunTags): HTMLElement {
  const tags = h('input', { id: 'ann-tags', type: 'text', size: 40, value: (run.tags ?? []).join(' '), placeholder: 'good bearing-regreased' }) as HTMLInputElement;
  const notes = h('textarea', { id: 'ann-notes', rows: 3, cols: 60, placeholder: 'what happened to the bench before this run' }) as HTMLTextAreaElement;
  notes.value = run.notes ?? '';
  const msg = notice();
  const save = h('button', { type: 'submit', id: 'ann-save' }, 'Save tags and notes');
  const form = h(
    'form',
    { class: 'inline-form' },
    field(tags, 'Tags'),
    field(notes, 'Notes'),
    save,
    msg,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const list = tags.value.split(/\s+/).filter((t) => t.length > 0);
    try {
      const after = await api<RunTags>('PATCH', `/api/runs/${run.id}`, { tags: list, notes: notes.value });
      tags.value = (after.tags ?? []).join(' ');
      msg.show(`Saved: ${after.tags?.length ?? 0} tag(s)${after.notes ? ', notes' : ''}.`);
    } catch (e) {
      msg.show((e as Error).message, 'error');
    }
  });
  return form;
}

/** "Compare with run N": the differences by path and each device profile's checksum. */
function compareForm(run: { id: number } & RunTags): HTMLElement {
  const other = h('input', { id: 'ann-with', type: 'number', min: 1, step: 1, size: 6, placeholder: 'run id' }) as HTMLInputElement;
  const out = h('div', { id: 'ann-diff' });
  const form = h(
    'form',
    { class: 'inline-form' },
    field(other, 'Compare with run'),
    h('button', { type: 'submit', id: 'ann-compare' }, 'Compare'),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    try {
      const d = await get<RunDiff>(`/api/runs/${run.id}/diff?with=${encodeURIComponent(other.value)}`);
      const diffs = (d.differences ?? []).map((x) => ({ what: x.what, [`run ${d.a}`]: show(x.a), [`run ${d.b}`]: show(x.b) }));
      out.append(
        diffs.length
          ? dataTable(diffs, undefined, `What differs between runs ${d.a} and ${d.b}`)
          : h('p', { class: 'ok' }, `Runs ${d.a} and ${d.b}: no difference in spec, configuration, profiles, lockstep sets, software or bench.`),
        dataTable((d.profiles ?? []).map((p) => ({ device: p.device, [`run ${d.a} (SHA-256)`]: short(p.a), [`run ${d.b} (SHA-256)`]: short(p.b) })), undefined, 'Device profiles'),
      );
    } catch (e) {
      out.append(h('p', { class: 'bad' }, (e as Error).message));
    }
  });
  return h('div', null, form, out);
}

function show(v: unknown): string {
  const text = v == null ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

function short(sum: unknown): string {
  return typeof sum === 'string' ? sum.slice(0, 16) : '(none)';
}
