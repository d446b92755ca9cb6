// The dashboard: hash routes to pages; one live stream for all of them.
import './style.css';
import { post, ApiError } from './api';
import { live } from './live';
import { benchPage } from './pages/bench';
import { launchPage } from './pages/launch';
import { queuePage } from './pages/queue';
import { runsPage, runPage } from './pages/runs';
import { modelsPage } from './pages/models';
import { characterisePage, campaignPage } from './pages/characterise';
import { trendsPage } from './pages/trends';
import { fleetPage } from './pages/fleet';
import { sensorsPage } from './pages/sensors';

type Page = (root: HTMLElement, arg?: string) => (() => void) | void;

const routes: [RegExp, Page, string][] = [
  [/^#\/bench$/, benchPage, 'Bench'],
  [/^#\/launch$/, launchPage, 'Launch'],
  [/^#\/queue$/, queuePage, 'Queue & schedule'],
  [/^#\/runs\/(\d+)$/, runPage, 'Run'],
  [/^#\/runs(?:\?bench=([A-Za-z0-9._-]{1,64}))?$/, runsPage, 'Runs'],
  [/^#\/models$/, modelsPage, 'Models & fits'],
  [/^#\/characterise\/(\d+)$/, campaignPage, 'Campaign'],
  [/^#\/characterise$/, characterisePage, 'Characterise'],
  [/^#\/trends$/, trendsPage, 'Trends'],
  [/^#\/sensors$/, sensorsPage, 'Sensors'],
  [/^#\/fleet$/, fleetPage, 'Fleet'],
];

let cleanup: (() => void) | void;

function route() {
  const hash = location.hash || '#/bench';
  const main = document.getElementById('main')!;
  if (cleanup) cleanup();
  cleanup = undefined;
  main.replaceChildren();
  const hit = routes.find(([re]) => re.test(hash));
  if (!hit) {
    location.hash = '#/bench';
    return;
  }
  const [re, page, title] = hit;
  const m = hash.match(re)!;
  document.title = `${title} · frictionbench`;
  main.dataset.page = title;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    const here = hash.startsWith(a.getAttribute('href')!);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  cleanup = page(main, m[1]);
  main.focus({ preventScroll: true });
}

function header() {
  const conn = document.getElementById('conn')!;
  const dropping = document.getElementById('dropping')!;
  const estop = document.getElementById('estop') as HTMLButtonElement;
  const queueState = document.getElementById('queue-state')!;
  const labView = document.getElementById('lab-view')!;
  const showConn = () => {
    conn.textContent = live.connected ? 'live: connected' : 'live: reconnecting…';
    conn.className = `conn ${live.connected ? 'ok' : 'bad'}`;
  };
  live.on((ev, d) => {
    if (ev === 'connection') showConn();
    if (ev === 'status') {
      // A lab view has no bench: nothing to stop, nothing queued; said on every page.
      labView.hidden = !d.lab;
      // The fleet is a lab's page: every bench that reports to it.
      document.getElementById('nav-fleet')!.hidden = !d.lab;
      estop.hidden = !!d.lab;
      document.getElementById('estop-key')!.hidden = !!d.lab;
      // A paused queue is said on every page: nothing will start until someone resumes it.
      queueState.hidden = !d.paused || !!d.lab;
      estop.classList.toggle('latched', !!d.estop);
      estop.textContent = d.estop ? 'E-STOP (latched)' : 'E-STOP';
    }
  });
  setInterval(() => {
    const msg = live.dropping();
    dropping.hidden = !msg;
    if (msg && dropping.textContent !== msg) dropping.textContent = msg;
  }, 500);
  const press = async () => {
    try {
      await post('/api/estop');
      estop.classList.add('latched');
      estop.textContent = 'E-STOP (latched)';
    } catch (e) {
      alert(`E-stop request failed: ${(e as ApiError).message}`);
    }
  };
  estop.addEventListener('click', press);
  // Esc presses the e-stop from every page. In a text field the first Esc only leaves it
  // (Esc there means "cancel this edit" to most people); the next one stops the bench.
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || ev.defaultPrevented || estop.hidden) return;
    const t = ev.target as HTMLElement | null;
    if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) {
      t.blur();
      return;
    }
    ev.preventDefault();
    void press();
  });
  // The skip link moves focus to the page's content; as a hash link it would route away.
  document.querySelector<HTMLAnchorElement>('a.skip')?.addEventListener('click', (ev) => {
    ev.preventDefault();
    document.getElementById('main')?.focus();
  });
  showConn();
}

declare global {
  interface Window {
    /** The live stream's state, for the end-to-end tests and the curious. */
    frictionbench?: { live: typeof live };
  }
}

header();
live.start();
// For the end-to-end tests and the curious: the live stream's state.
window.frictionbench = { live };
window.addEventListener('hashchange', route);
route();
