// A run as `GET /api/runs/{id}` answers it (`Schemas['RunRecord']`, from the service's
// document), and its analysis (`results`, by kind). The document leaves the analysis, the spec
// and the configuration snapshot free-form (each kind's JSON, the bench.toml as read), so those
// are typed here by hand, field for field as the service writes them.
import type { Schemas } from './api';
import type { ImportedRun } from './answers';

/** One line of the interruption log or the run log. */
export type LogEntry = Schemas['RunRecord']['run_log'][number];

/** The control loop's timing (run_store `TimingStats`). */
export type Timing = Schemas['RunRecord']['timing'];

/** Where one lockstep model's parameters came from (`bench_config.lockstep_sets`). */
export interface LockstepSet {
  model: string;
  set_id?: number | null;
  set_name?: string | null;
  source: string;
}

/** `GET /api/runs/{id}`: the spec (an import's: its source and columns) and the bench
 *  configuration snapshot as far as the run page reads them. */
export type RunRecord = Omit<Schemas['RunRecord'], 'spec' | 'bench_config'> & {
  spec: ImportedRun['spec'];
  bench_config: ({ geometry?: string; lockstep_sets?: LockstepSet[] } & Record<string, unknown>) | null;
};

/** A point of a constant-velocity sweep's Stribeck curve. */
export interface StribeckPoint {
  velocity_rad_s: number;
  mean_torque_nm: number;
  std_torque_nm: number;
  /** The velocity loop did not hold the set point: left out of every fit. */
  stick_slip?: boolean;
}

export interface SweepResults {
  positive?: StribeckPoint[];
  negative?: StribeckPoint[];
}

/** A curve as two columns. */
export interface XY {
  x: number[];
  y: number[];
}

export interface PreslidingResults {
  ramps?: { direction: number; curve: XY; breakaway_torque_nm: number | null; breakaway_displacement_rad: number | null; initial_stiffness_nm_rad: number | null }[];
  reversals?: { curve: XY; reversal_points: XY } | null;
  sine?: Record<string, unknown> | null;
  step?: Record<string, unknown> | null;
}

export interface LagResults {
  loops?: { omega_rad_s: number; chirp?: boolean; direction: number; loop_v_torque: XY; hysteresis_nm: number | null; n: number }[];
}

/** A breakaway point of a torque ramp (by `rate_nm_s`) or a dwell (by `dwell_s`). */
export interface BreakawayPoint {
  rate_nm_s?: number;
  dwell_s?: number;
  breakaway_torque_nm: number;
  std_torque_nm: number;
}

export interface BreakawayResults {
  positive?: BreakawayPoint[];
  negative?: BreakawayPoint[];
}

export interface StaircaseResults {
  fs_nm?: number | null;
  positive?: { fs_nm: number; std_nm: number; n: number } | null;
  negative?: { fs_nm: number; std_nm: number; n: number } | null;
}

export interface PrbsResults {
  v_rms_rad_s?: number;
  v_max_rad_s?: number;
  rls?: { fv_nm_s_rad: number; fc_nm: number } | null;
}

export interface ValidationResults {
  rms_error?: number | null;
  pieces?: Record<string, unknown>[];
}

/** One compensator of a compensation trial, ranked by RMS tracking error [rad]. */
export interface Compensator {
  rank: number;
  name: string;
  law: string;
  rms_error: number | null;
  max_error: number | null;
  reversal_glitch: number | null;
  effort_rms: number | null;
  improvement_pct: number | null;
  unstable?: boolean;
  trials: number;
  per_reference?: Record<string, unknown>[];
}

export interface TrialResults {
  baseline?: string | null;
  ranking?: Compensator[];
  trace_reference?: string | null;
  reversal_traces?: { name: string; t_s: number[]; error_rad: number[] }[];
}

/** A stored parameter set as the run page reads it: which runs and procedure made it. */
export interface SetOfRun {
  provenance?: { procedure?: string; method?: string; runs?: (number | string)[] } | null;
}
