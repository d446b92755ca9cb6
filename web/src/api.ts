// REST client for `bench serve` (contract: the OpenAPI document at /api/openapi.json; docs/src/api.md). Errors keep the server's message and field.
// Answers are `unknown` until the caller names their type, from the generated api-types.ts (`Schemas`).
import type { components } from './api-types';

/** The service's schemas, generated from web/openapi.json at build time. */
export type Schemas = components['schemas'];

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
    public field: string | null,
  ) {
    super(message);
  }
}

/** Bearer token of a daemon started with one (kept in this browser only). */
export function token(): string {
  return localStorage.getItem('frictionbench.token') ?? '';
}

export function setToken(t: string): void {
  if (t) localStorage.setItem('frictionbench.token', t);
  else localStorage.removeItem('frictionbench.token');
}

/** `path` with the token as `access_token` for what cannot send headers (EventSource, links). */
export function withToken(path: string): string {
  const t = token();
  if (!t) return path;
  return `${path}${path.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(t)}`;
}

/** Sends a request; an error answer becomes an ApiError with the server's message and field. */
async function send<T>(path: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, `cannot reach the daemon (${(e as Error).message})`, null);
  }
  const text = await res.text();
  let json: unknown = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) {
    const e = errorBody(json);
    throw new ApiError(res.status, e?.error ?? (text || res.statusText), e?.field ?? null);
  }
  return json as T;
}

/** The service's error answer (`Schemas['Error']`), if `json` is one. */
function errorBody(json: unknown): { error: string; field: string | null } | null {
  if (typeof json !== 'object' || json === null) return null;
  const { error, field } = json as Partial<Record<keyof Schemas['Error'], unknown>>;
  if (typeof error !== 'string') return null;
  return { error, field: typeof field === 'string' ? field : null };
}

/** The bearer token header, when one is set. */
function auth(): Record<string, string> {
  // Sent with reads too: a daemon started with --token-for-reads needs it on GETs.
  return token() ? { Authorization: `Bearer ${token()}` } : {};
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = auth();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return send<T>(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** POSTs a file as the raw body (streamed by the browser) with its own content type. */
export async function postFile<T = unknown>(path: string, file: Blob, type: string): Promise<T> {
  return send<T>(path, { method: 'POST', headers: { ...auth(), 'Content-Type': type }, body: file });
}

export const get = <T = unknown>(path: string) => api<T>('GET', path);
export const post = <T = unknown>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const put = <T = unknown>(path: string, body: unknown) => api<T>('PUT', path, body);
export const del = <T = unknown>(path: string) => api<T>('DELETE', path);

export interface RunSummary {
  id: number;
  /** The bench it was recorded on ('' for runs before benches had ids). */
  bench_id: string;
  kind: string;
  name: string;
  status: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  sample_count: number;
}

/** A waiting run as the queue lists it. */
export type QueueItem = Schemas['ItemListing'];

/** `GET /api/queue`, `PUT /api/queue` and the live `queue` event. */
export type Queue = Schemas['QueueListing'];

/** Query string from the defined, non-empty entries. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
