// The specs shipped in experiments/specs/, bundled at build time (no route serves them): the
// quick one of each kind (under a minute; the compensation trial under two) first, the
// papers' full ones after. Launch offers them as presets.
import constant_velocity_sweep from '../../experiments/specs/constant_velocity_sweep.json';
import constant_velocity_sweep_full from '../../experiments/specs/constant_velocity_sweep-full.json';
import presliding from '../../experiments/specs/presliding.json';
import presliding_full from '../../experiments/specs/presliding-full.json';
import frictional_lag from '../../experiments/specs/frictional_lag.json';
import frictional_lag_full from '../../experiments/specs/frictional_lag-full.json';
import torque_ramp from '../../experiments/specs/torque_ramp.json';
import torque_ramp_full from '../../experiments/specs/torque_ramp-full.json';
import breakaway_staircase from '../../experiments/specs/breakaway_staircase.json';
import breakaway_staircase_full from '../../experiments/specs/breakaway_staircase-full.json';
import dwell_time from '../../experiments/specs/dwell_time.json';
import dwell_time_full from '../../experiments/specs/dwell_time-full.json';
import prbs from '../../experiments/specs/prbs.json';
import prbs_full from '../../experiments/specs/prbs-full.json';
import validation_profile from '../../experiments/specs/validation_profile.json';
import validation_profile_full from '../../experiments/specs/validation_profile-full.json';
import compensation_trial from '../../experiments/specs/compensation_trial.json';
import compensation_trial_full from '../../experiments/specs/compensation_trial-full.json';

export interface Preset {
  /** The file it came from, e.g. `constant_velocity_sweep.json`. */
  file: string;
  /** Whether it is the paper-faithful (long) version of its kind. */
  full: boolean;
  spec: { kind: string; name?: string; params: Record<string, unknown> };
}

export const PRESETS: Preset[] = [
  { file: 'constant_velocity_sweep.json', full: false, spec: constant_velocity_sweep },
  { file: 'presliding.json', full: false, spec: presliding },
  { file: 'frictional_lag.json', full: false, spec: frictional_lag },
  { file: 'torque_ramp.json', full: false, spec: torque_ramp },
  { file: 'breakaway_staircase.json', full: false, spec: breakaway_staircase },
  { file: 'dwell_time.json', full: false, spec: dwell_time },
  { file: 'prbs.json', full: false, spec: prbs },
  { file: 'validation_profile.json', full: false, spec: validation_profile },
  { file: 'compensation_trial.json', full: false, spec: compensation_trial },
  { file: 'constant_velocity_sweep-full.json', full: true, spec: constant_velocity_sweep_full },
  { file: 'presliding-full.json', full: true, spec: presliding_full },
  { file: 'frictional_lag-full.json', full: true, spec: frictional_lag_full },
  { file: 'torque_ramp-full.json', full: true, spec: torque_ramp_full },
  { file: 'breakaway_staircase-full.json', full: true, spec: breakaway_staircase_full },
  { file: 'dwell_time-full.json', full: true, spec: dwell_time_full },
  { file: 'prbs-full.json', full: true, spec: prbs_full },
  { file: 'validation_profile-full.json', full: true, spec: validation_profile_full },
  { file: 'compensation_trial-full.json', full: true, spec: compensation_trial_full },
];
