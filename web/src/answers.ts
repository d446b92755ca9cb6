// Answers whose schema the service's OpenAPI document still leaves free-form (`Record`: a campaign,
// a diff, the JSON samples): typed here by hand, each naming its route, until the
// service types them and these become aliases of the generated `Schemas`.

import type { Schemas } from './api';

type Column = (number | null)[];

/** `GET /api/runs/{id}/samples?format=json`: one array per column, model outputs by model. */
export interface SampleColumns {
  t: number[];
  x: Column;
  v: Column;
  u_cmd: Column;
  torque_motor: Column;
  torque_sensor: Column;
  models?: string[];
  outputs?: Record<string, Column>;
}

/** `PATCH /api/runs/{id}`: the run's tags and notes after the edit. */
export interface RunTags {
  tags?: string[];
  notes?: string | null;
}

/** `GET /api/runs/{id}/diff?with=`: what differs between runs `a` and `b`. */
export interface RunDiff {
  a: number;
  b: number;
  differences?: { what: string; a: unknown; b: unknown }[];
  profiles?: { device: string; a: string | null; b: string | null }[];
}

/** `GET /api/campaigns` (newest first) and `GET /api/campaigns/{id}`. */
export interface CampaignRecord {
  id: number;
  created_at: string;
  status: string;
  reason?: string | null;
  request?: { models?: string[] };
  steps?: { name: string; status: string; run_id?: number | null; bench_time_s?: number | null }[];
  trial_run_id?: number | null;
  answer?: { text?: string; bench_time_s?: number | null; trial?: { status?: string; bench_time_s?: number | null } } | null;
}

/** A parameter of a model in `GET /api/models`. */
export interface ModelParam {
  name: string;
  unit?: string;
  /** Its unit on this bench (N m or N ...). */
  bench_unit?: string;
  default?: unknown;
  description?: string;
}

/** An entry of `GET /api/models`. */
export interface ModelInfo {
  id: string;
  description?: string;
  asymmetric?: boolean;
  params?: ModelParam[];
  [key: string]: unknown;
}

/** An entry of `GET /api/parameter-sets`. */
export interface ParameterSet {
  id: number;
  name: string;
  model_id: string;
  created_at: string;
  params: unknown;
  provenance?: { procedure?: string; method?: string; runs?: number[]; verdict?: { status?: string; reasons?: string[] } };
}

/** Values by parameter name, the negative direction's under `negative`. */
export type ByParam = Record<string, unknown> & { negative?: Record<string, unknown> };

/** A fit's report (`report` of `POST /api/fits`, `bench fit --json`). */
export interface FitReport {
  params?: ByParam;
  std_errors?: ByParam;
  relative_std_errors?: ByParam;
  provenance?: { model?: string; termination?: string; n_points?: number };
  verdict?: { status: string; reasons?: string[] };
  at_bound?: string[];
  mse?: number | null;
  termination?: string;
  condition?: number | null;
  details?: { replay?: { t: number[]; measured: (number | null)[]; model: (number | null)[] } };
  validation?: ValidationRow[];
}

/** The spec recording-import stores with an imported run. */
export type ImportSpec = Extract<Schemas['RunRecord']['spec'], { kind: 'imported' }>;

/** An imported run's results: what the recording holds. */
export type ImportResults = Extract<NonNullable<Schemas['RunRecord']['results']>, { kind: 'imported' }>;

/** `GET /api/runs/{id}` of an imported recording: its source, columns, units and time stamps. */
export interface ImportedRun {
  sample_count: number;
  spec: ImportSpec;
  results: ImportResults | null;
}

/** `POST /api/runs/import`: the run it made and what it read. */
export interface ImportAnswer {
  run_id: number;
  stats?: { samples?: number };
}

/** One held-out score of a fit's report (`report.validation`). */
export interface ValidationRow {
  record?: unknown;
  rms?: number | null;
  rel_error_pct?: number | null;
  r2?: number | null;
  n?: number;
  compared?: unknown;
}
