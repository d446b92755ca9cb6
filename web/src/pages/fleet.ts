// Fleet: every bench that reports to this lab store (GET /api/lab/benches): its state, the
// running run and its progress, the last stop reason and how long ago it last sent a
// heartbeat; a bench quiet for 3 heartbeats is marked stale. Each row links to the bench's runs.
import { get } from '../api';
import { h, clear } from '../dom';

interface FleetBench {
  bench_id: string;
  state: 'idle' | 'running' | 'suspended' | 'faulted' | null;
  run_id: number | null;
  run_name: string | null;
  progress: number | null;
  fault: string | null;
  last_stop_reason: string | null;
  last_heartbeat: string | null;
  heartbeat_age_s: number | null;
  last_push: string | null;
  stale: boolean;
  stale_after_s: number | null;
}

/** How often the page asks again [ms]: well inside the default 5 s heartbeat. */
const REFRESH_MS = 1000;

/** "4.2 s ago", "3 min ago", "2 h ago". */
function ago(s: number | null): string {
  if (s === null) return 'never';
  if (s < 120) return `${s.toFixed(1)} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

export function fleetPage(root: HTMLElement): () => void {
  const out = h('div', { id: 'fleet-out', 'aria-live': 'polite' });
  root.append(
    h('h1', null, 'Fleet'),
    h('p', { class: 'muted' }, 'Every bench that sends this lab a heartbeat ([lab] in its bench.toml) or pushes runs here. A bench is stale after three missed heartbeats: what its row says may be out of date.'),
    out,
  );
  let refreshes = 0;
  const load = async () => {
    try {
      const { benches } = await get<{ benches: FleetBench[] }>('/api/lab/benches');
      show(out, benches);
      out.dataset.refreshes = String(++refreshes);
    } catch (e) {
      clear(out, h('p', { class: 'bad', role: 'alert' }, (e as Error).message));
    }
  };
  load();
  const tick = window.setInterval(load, REFRESH_MS);
  return () => clearInterval(tick);
}

function show(out: HTMLElement, benches: FleetBench[]) {
  if (!benches.length) {
    clear(out, h('p', { class: 'muted' }, 'No bench reports here yet.'));
    return;
  }
  const cols = ['bench', 'state', 'run', 'progress', 'last stop reason', 'heartbeat', 'last push'];
  clear(
    out,
    h(
      'table',
      { class: 'data', id: 'fleet-table' },
      h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, benches.map(row)),
    ),
  );
}

function row(b: FleetBench): HTMLElement {
  const state = b.state ?? 'no heartbeat';
  const stateCell = h('td', { class: 'state' }, state, b.fault ? ` (${b.fault})` : '');
  const progress = b.progress === null ? '—' : h('span', null, h('progress', { max: '1', value: String(b.progress) }), ` ${Math.round(b.progress * 100)} %`);
  const stale = b.stale
    ? h('strong', { class: 'stale-mark bad', title: b.stale_after_s === null ? 'no heartbeat ever' : `no heartbeat for more than ${b.stale_after_s} s` }, ' STALE')
    : '';
  return h(
    'tr',
    { 'data-bench': b.bench_id, 'data-state': b.state ?? '', 'data-stale': String(b.stale), class: b.stale || b.state === 'faulted' ? 'bad' : '' },
    h('td', null, h('a', { href: `#/runs?bench=${encodeURIComponent(b.bench_id)}`, title: `${b.bench_id}'s runs in this lab` }, b.bench_id)),
    stateCell,
    h('td', { class: 'run' }, b.run_name === null ? '—' : `${b.run_name} (#${b.run_id} on the bench)`),
    h('td', null, progress),
    h('td', { class: 'reason' }, b.last_stop_reason ?? '—'),
    h('td', { class: 'heartbeat' }, ago(b.heartbeat_age_s), stale),
    h('td', null, b.last_push ?? '—'),
  );
}
