// A run as `GET /api/runs/{id}` answers it (`Schemas['RunRecord']`, from the service's
// document): its analysis (`results`, experiments' `Results` tagged by kind, or an import's
// statistics), its spec and its bench snapshot are all typed there.
import type { Schemas } from './api';

/** One line of the interruption log or the run log. */
export type LogEntry = Schemas['RunRecord']['run_log'][number];

/** The control loop's timing (run_store `TimingStats`). */
export type Timing = Schemas['RunRecord']['timing'];

/** `GET /api/runs/{id}`. */
export type RunRecord = Schemas['RunRecord'];

/** Where one lockstep model's parameters came from (`bench_config.lockstep_sets`). */
export type LockstepSet = NonNullable<NonNullable<RunRecord['bench_config']>['lockstep_sets']>[number];

/** A kind's analysis, tagged by `kind` (experiments `Results`). */
export type Results = Schemas['Results'];

/** The analysis of kind `K`. */
export type ResultsOf<K extends Results['kind']> = Extract<Results, { kind: K }>;

/** A point of a constant-velocity sweep's Stribeck curve. */
export type StribeckPoint = Schemas['StribeckPoint'];
export type SweepResults = ResultsOf<'constant_velocity_sweep'>;
export type PreslidingResults = ResultsOf<'presliding'>;
export type LagResults = ResultsOf<'frictional_lag'>;
export type StaircaseResults = ResultsOf<'breakaway_staircase'>;
export type PrbsResults = ResultsOf<'prbs'>;
export type ValidationResults = ResultsOf<'validation_profile'>;
export type TrialResults = ResultsOf<'compensation_trial'>;
/** One compensator of a compensation trial, ranked by RMS tracking error [rad]. */
export type Compensator = TrialResults['ranking'][number];

/** A stored parameter set as the run page reads it: which runs and procedure made it. */
export interface SetOfRun {
  provenance?: { procedure?: string; method?: string; runs?: (number | string)[] } | null;
}
