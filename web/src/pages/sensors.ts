// Sensors: the bench's torque sensors (GET /api/sensors), each with its current calibration
// (a due date near or past is a warning: an overdue one refuses runs), its history and the zero
// its recent runs measured with their drift. A sensor without a record says how to add one.
import { get, type Schemas } from '../api';
import { h, clear, fmt, kvTable } from '../dom';

type Sensor = Schemas['SensorStatus'];
type Calibration = Schemas['Calibration'];

/** Days before its due date from which a calibration is shown as due soon. */
export const DUE_SOON_DAYS = 30;

export function sensorsPage(root: HTMLElement): void {
  const out = h('div', { id: 'sensors-out', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'loading…'));
  root.append(
    h('h1', null, 'Sensors'),
    h('p', { class: 'muted' }, 'The torque sensors this bench reads, with the calibration each run is checked against (bench sensors list shows the same). A run on a sensor past its due date is refused unless [safety] allow_overdue_calibration = true.'),
    out,
  );
  get<Schemas['Sensors']>('/api/sensors').then(
    ({ bench_id, sensors }) => {
      if (!sensors.length) {
        clear(out, h('p', { class: 'muted', id: 'no-sensors' }, `Bench ${bench_id} reads no torque sensor ([daq] measured_torque or [sensor] in its bench.toml): nothing to calibrate.`));
        return;
      }
      clear(out, sensors.map(sensorCard));
    },
    (e: Error) => clear(out, h('p', { class: 'bad', role: 'alert' }, e.message)),
  );
}

function sensorCard(s: Sensor): HTMLElement {
  const c = s.calibration ?? null;
  return h(
    'section',
    { class: 'card sensor', 'data-sensor': s.name, 'aria-labelledby': `sensor-${s.name}` },
    h('h2', { id: `sensor-${s.name}` }, s.name, h('span', { class: 'muted' }, ` (${s.kind === 'analog_input' ? 'DAQ analog input' : 'Modbus sensor'})`)),
    c ? current(s, c) : howToAdd(s),
    c && (s.history ?? []).length > 1 ? history(s) : null,
    zeros(s),
  );
}

/** The current calibration, its due date judged. */
function current(s: Sensor, c: Calibration): HTMLElement {
  return h(
    'div',
    { class: 'calibration' },
    dueNote(s.due_in_days ?? null, c.due),
    kvTable(
      [
        ['Sensitivity', `${fmt(c.sensitivity)} ${s.sensitivity_unit}`],
        ['Offset', `${fmt(c.offset)} ${s.offset_unit}`],
        ['Certificate', c.certificate],
        ['Calibrated', c.calibrated],
        ['Due', c.due],
        ['Recorded', `${c.recorded_at} by ${c.recorded_by}`],
      ],
      'Current calibration',
    ),
  );
}

/** "due in N days", a warning within [`DUE_SOON_DAYS`], an alert once overdue. */
function dueNote(days: number | null, due: string): HTMLElement | null {
  if (days === null) return null;
  if (days < 0) {
    const n = -days;
    return h('p', { class: 'bad due overdue', role: 'alert' }, h('strong', null, `Calibration OVERDUE by ${n} day${n === 1 ? '' : 's'}`), ` (due ${due}): runs are refused until it is calibrated again (or [safety] allow_overdue_calibration = true).`);
  }
  if (days <= DUE_SOON_DAYS) {
    return h('p', { class: 'warn due soon', role: 'status' }, h('strong', null, `Calibration due soon: in ${days} day${days === 1 ? '' : 's'}`), ` (${due}).`);
  }
  return h('p', { class: 'muted due' }, `Calibration due in ${days} days (${due}).`);
}

/** A sensor without a record: the command that adds one. */
function howToAdd(s: Sensor): HTMLElement {
  const cmd = `bench sensors calibrate --sensor ${s.name} --sensitivity <${s.sensitivity_unit}> --offset <${s.offset_unit}> --certificate <id> --calibrated YYYY-MM-DD --due YYYY-MM-DD`;
  return h(
    'div',
    { class: 'no-calibration' },
    h('p', null, 'No calibration on record: its runs go ahead, and each run notes that it had none. Record one from the certificate:'),
    h('pre', null, h('code', null, cmd)),
  );
}

/** Every record, newest first. */
function history(s: Sensor): HTMLElement {
  const rows = (s.history ?? []).map((c, i) =>
    h(
      'tr',
      { class: i === 0 ? 'current' : '' },
      h('td', null, c.calibrated),
      h('td', null, c.due),
      h('td', null, c.certificate),
      h('td', null, fmt(c.sensitivity)),
      h('td', null, fmt(c.offset)),
      h('td', null, c.recorded_by),
    ),
  );
  const cols = ['calibrated', 'due', 'certificate', `sensitivity [${s.sensitivity_unit}]`, `offset [${s.offset_unit}]`, 'recorded by'];
  return table('history', 'Calibration history (newest first)', cols, rows);
}

/** The zero each recent run measured and how it drifted. */
function zeros(s: Sensor): HTMLElement {
  if (!s.zeros.length) return h('p', { class: 'muted zeros-none' }, 'No run has measured its zero yet: each run measures it before it moves.');
  const d = s.drift;
  const unit = s.offset_unit;
  const drift = kvTable(
    [
      ['Runs', String(d.runs)],
      ['Drift', d.slope_per_day === null || d.slope_per_day === undefined ? '— (needs two runs)' : `${fmt(d.slope_per_day)} ${unit}/day`],
      ['Spread', d.spread === null || d.spread === undefined ? '—' : `${fmt(d.spread)} ${unit}`],
    ],
    'Zero across runs',
  );
  const rows = s.zeros.map((z) =>
    h(
      'tr',
      null,
      h('td', null, h('a', { href: `#/runs/${z.run_id}` }, `#${z.run_id}`)),
      h('td', null, fmt(z.zero)),
      h('td', null, z.calibration_id === null || z.calibration_id === undefined ? 'none' : String(z.calibration_id)),
      h('td', null, z.at),
    ),
  );
  return h('div', { class: 'zeros' }, drift, table('zeros', 'Zero of recent runs (newest first)', ['run', `zero [${unit}]`, 'calibration', 'measured'], rows));
}

function table(cls: string, caption: string, cols: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h('table', { class: `data ${cls}` }, h('caption', null, caption), h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))), h('tbody', null, rows)),
  );
}
