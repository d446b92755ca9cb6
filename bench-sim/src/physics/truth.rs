//! The friction the simulated bench has when nobody names another.

use friction::registry::ModelSpec;

/// The default true friction: an asymmetric GMS (Generalized Maxwell-Slip), the model with
/// presliding hysteresis and non-local memory the issue asks for, scaled to a small rotary
/// bench (N m, rad, rad/s) so that every experiment sees its effect through the 2^17 count/rev
/// encoder:
/// - Coulomb 1 N m and breakaway 1.5 N m for positive motion, 0.9 and 1.35 N m (10 % lower)
///   for negative motion; Stribeck speed 0.1 rad/s (Gaussian, delta 2), so a sweep from
///   0.05 rad/s shows the Stribeck dip; viscous 0.05 N m s/rad (1.5 N m at 10 rad/s);
/// - four elements of stiffness 500, 250, 150 and 100 N m/rad (total 1000) holding 10, 20,
///   30 and 40 % of the level: presliding spans 0.3 to 6 mrad (6 to 125 counts), so hysteresis
///   loops and the sinusoidal presliding amplitude are resolved;
/// - micro-damping 1 N m s/rad: with the 1e-3 kg m² rotor the presliding mode is at
///   sqrt(1000 / 1e-3) = 1000 rad/s with damping ratio 0.5 (a torque step overshoots);
/// - attraction C = 50 N m/s on both sides: a slipping element follows a change of s(v)
///   with a frictional lag s/C of 20 to 30 ms, which the frictional-lag sinusoids resolve.
///   It also keeps breakaway well posed: with the registry's C = 1e4 (lag 0.15 ms) the
///   slipping elements follow the falling Stribeck curve at once, and a 0.1 ms jitter in when
///   a command lands turned a ramp's breakaway from 1.32 into 1.07 N m; at 50 it moves it
///   by less than 0.7 %.
pub fn default_truth() -> ModelSpec {
    ModelSpec {
        model: "gms".to_string(),
        params: serde_json::json!({
            "k": [500.0, 250.0, 150.0, 100.0],
            "alpha": [0.1, 0.2, 0.3, 0.4],
            "fc": 1.0,
            "fs": 1.5,
            "vs": 0.1,
            "delta": 2.0,
            "sigma1": 1.0,
            "sigma2": 0.05,
            "c": 50.0,
            "negative": {"fc": 0.9, "fs": 1.35, "c": 50.0}
        }),
    }
}
