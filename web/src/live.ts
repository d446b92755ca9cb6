// The live stream (SSE /api/live): one connection for the whole page, reconnecting after a
// daemon restart, with a ring buffer of the latest samples and the model outputs.
import { withToken, type Schemas } from './api';

export const CAPACITY = 20_000; // points kept per series (≥ 10 000 asked)

export const SIGNALS = ['x', 'v', 'u_cmd', 'torque_motor', 'torque_sensor'] as const;

/** One message of the stream as the service's document describes it (`LiveEvent`). */
export type LiveEvent = Schemas['LiveEvent'];
/** The stream's event names: `sample`, `status`, `run`, `queue`, `fit`, `dropped`. */
export type EventName = LiveEvent['event'];
/** The data of event `E`. */
export type EventData<E extends EventName> = Extract<LiveEvent, { event: E }>['data'];
/** What a listener is called with: an event's name and its data, or `connection` (open or not). */
export type Message = { [E in EventName]: [E, EventData<E>] }[EventName] | ['connection', boolean];
type Listener = (...m: Message) => void;
type Sample = Schemas['Sample'];

export class Ring {
  t = new Float64Array(CAPACITY);
  sig: Record<string, Float64Array> = {};
  out: Float64Array[] = [];
  models: string[] = [];
  len = 0;
  head = 0; // next write position
  total = 0; // samples received since the buffer was cleared

  constructor() {
    for (const s of SIGNALS) this.sig[s] = new Float64Array(CAPACITY);
  }

  clear(models: string[]) {
    this.models = models.slice();
    this.out = models.map(() => new Float64Array(CAPACITY));
    this.len = 0;
    this.head = 0;
    this.total = 0;
  }

  push(sample: Sample, outputs: (number | null)[]) {
    const i = this.head;
    this.t[i] = sample.t ?? NaN;
    for (const s of SIGNALS) this.sig[s][i] = typeof sample[s] === 'number' ? sample[s] : NaN;
    for (let m = 0; m < this.out.length; m++) {
      const o = outputs[m];
      this.out[m][i] = typeof o === 'number' ? o : NaN;
    }
    this.head = (i + 1) % CAPACITY;
    this.len = Math.min(this.len + 1, CAPACITY);
    this.total++;
  }

  lastT(): number | null {
    return this.len ? this.t[(this.head + CAPACITY - 1) % CAPACITY] : null;
  }

  /** The buffered points in time order, as plain arrays (NaN → null for gaps). */
  ordered(a: Float64Array): (number | null)[] {
    const out = new Array(this.len);
    const start = (this.head + CAPACITY - this.len) % CAPACITY;
    for (let k = 0; k < this.len; k++) {
      const v = a[(start + k) % CAPACITY];
      out[k] = Number.isFinite(v) ? v : null;
    }
    return out;
  }
}

export class Live {
  ring = new Ring();
  connected = false;
  lastSampleAt = 0;
  lastDroppedAt = -Infinity;
  droppedFrames = 0;
  status: EventData<'status'> | null = null;
  private es: EventSource | null = null;
  private listeners = new Set<Listener>();
  private retryMs = 500;
  private timer: number | undefined;

  start() {
    this.open();
  }

  on(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(...m: Message) {
    for (const l of this.listeners) l(...m);
  }

  private open() {
    if (this.es) this.es.close();
    const es = new EventSource(withToken('/api/live'));
    this.es = es;
    es.onopen = () => {
      this.connected = true;
      this.retryMs = 500;
      this.emit('connection', true);
    };
    es.onerror = () => {
      // EventSource retries by itself on network errors but gives up on HTTP errors; we own
      // the retry so that a restarted daemon is always picked up again.
      es.close();
      if (this.es !== es) return;
      this.es = null;
      if (this.connected) {
        this.connected = false;
        this.emit('connection', false);
      }
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    };
    // Each data line is the JSON of its event's schema (the service's document, LiveEvent).
    const on = <E extends EventName>(name: E, f: (d: EventData<E>) => void) =>
      es.addEventListener(name, (e) => f(JSON.parse((e as MessageEvent<string>).data) as EventData<E>));
    on('sample', (d) => this.onSample(d));
    on('status', (d) => {
      this.status = d;
      this.emit('status', d);
    });
    on('run', (d) => this.emit('run', d));
    on('queue', (d) => this.emit('queue', d));
    on('fit', (d) => this.emit('fit', d));
    on('dropped', (d) => this.noteDropped(d));
  }

  /** A `dropped` event: `{"frames": n}` frames this client lost. */
  noteDropped(d: EventData<'dropped'>) {
    this.droppedFrames += Number(d.frames) || 0;
    this.lastDroppedAt = performance.now();
    this.emit('dropped', d);
  }

  /** A `sample` event: one sample and the lockstep outputs, in `models` order. */
  onSample(d: EventData<'sample'>) {
    const { sample, models, outputs } = d;
    const last = this.ring.lastT();
    const modelsChanged = models.length !== this.ring.models.length || models.some((m, i) => m !== this.ring.models[i]);
    // A new run starts its clock again: begin a new buffer.
    if (modelsChanged || (last !== null && (sample.t ?? last) < last)) this.ring.clear(models);
    this.ring.push(sample, outputs);
    this.lastSampleAt = performance.now();
    this.emit('sample', d);
  }

  /** "dropping data": frames lost recently, or a running bench whose samples stopped. */
  dropping(): string | null {
    const now = performance.now();
    if (now - this.lastDroppedAt < 5000) return `dropping data: ${this.droppedFrames} frames lost`;
    const running = this.status && (this.status.busy || this.status.run_id != null);
    if (this.connected && running && this.lastSampleAt && now - this.lastSampleAt > 2000)
      return `dropping data: the live stream stalled ${((now - this.lastSampleAt) / 1000).toFixed(0)} s ago`;
    return null;
  }
}

export const live = new Live();

/**
 * The lockstep columns by meaning: `ID` is a model's predicted friction [N m]; `ID:x_plant`
 * is the position [rad] of the plant simulated with that model.
 */
export function splitModels(models: string[]): { friction: number[]; position: number[] } {
  const friction: number[] = [];
  const position: number[] = [];
  models.forEach((m, i) => {
    if (!m.includes(':')) friction.push(i);
    else if (m.endsWith(':x_plant')) position.push(i);
  });
  return { friction, position };
}
