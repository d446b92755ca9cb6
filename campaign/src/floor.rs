//! The bench's repeatability on the validation run: the validation profile runs twice in one
//! run ([`super::design::validation`], [`REPEATS`]), and the measured friction of the second
//! pass is set against the first's at the same time into its segment. Each pass is the bench's
//! friction plus its own noise, so their difference carries the noise twice: half the mean
//! squared difference is the noise's variance, the validation MSE no model can beat
//! (`answer.floor_mse`).
//!
//! It is not yet that: on the default simulated bench (`cargo test -p campaign --test
//! replay_floor -- --nocapture`) the passes start from different states (the first from rest,
//! the second from the end of the first's last step), and their opening hold and first ramp
//! differ by 7.2e-2 and 1.2e-2 N² m² (half the mean squared difference; the angle by 1.4e-2 and
//! 6.0e-3 rad rms) against 5e-6 to 4e-4 on every later piece, so those two pieces make the
//! floor 5.3e-3 where the pieces both passes share give 8.6e-5 (the sensor's noise alone:
//! 1.0e-5). Replayed on the encoder's displacement ([`super::encoder_velocity`]) the true model
//! leaves 4.8e-4, 0.09 of the floor but 5.6 times the shared pieces'; replayed on the plant's
//! true angle and speed it leaves 3.8e-6, so that remainder is the encoder's: one count
//! (4.8e-5 rad) against the presliding stiffness (1000 N m/rad) is 0.048 N m, whose uniform
//! spread (variance 1.9e-4) is what the holds leave, and a reversal between two samples is not
//! seen at all (the steps, 8e-4 to 2.6e-3). A floor of the shared pieces alone would count
//! that against every model, the true one included, and a static model, which has no friction
//! at rest to offer, leaves 40 to 58 times it on a static truth: the floor stays over both
//! passes until a floor that includes what the encoder cannot resolve is measured.

use experiments::Sample;
use run_store::Store;

/// Passes of the validation profile in the validation run.
pub const REPEATS: usize = 2;

/// Half the mean squared difference of the measured friction between the first and the second
/// pass of `pieces` segments each, paired sample by sample within each segment (both passes
/// run the same plan at the same rate). `None` without a second pass to pair with.
pub fn floor_mse(samples: &[Sample], pieces: usize) -> Option<f64> {
    let by_segment = |s: u32| -> Vec<f64> {
        samples
            .iter()
            .filter(|x| x.segment == s)
            .map(Sample::measured_torque)
            .collect()
    };
    let (mut sum, mut n) = (0.0, 0usize);
    for s in 0..pieces as u32 {
        let (a, b) = (by_segment(s), by_segment(s + pieces as u32));
        for (x, y) in a.iter().zip(&b) {
            if x.is_finite() && y.is_finite() {
                sum += (x - y).powi(2);
                n += 1;
            }
        }
    }
    (n > 0).then(|| 0.5 * sum / n as f64)
}

/// [`floor_mse`] of stored run `run` whose spec has `2 * pieces` pieces.
pub async fn of_run(store: &Store, run: i64, pieces: usize) -> anyhow::Result<Option<f64>> {
    let query = run_store::SampleQuery::default();
    let set = bench_daemon::resume::chain_samples(store, run, &query).await?;
    let samples: Vec<Sample> = set
        .samples
        .iter()
        .map(bench_daemon::session::to_experiment_sample)
        .collect();
    Ok(floor_mse(&samples, pieces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(segment: u32, torque: f64) -> Sample {
        Sample {
            t: 0.0,
            x: 0.0,
            v: 0.0,
            u_cmd: 0.0,
            torque_motor: f64::NAN,
            torque_sensor: torque,
            segment,
            flags: experiments::Flags::default(),
        }
    }

    #[test]
    fn the_floor_is_half_the_mean_squared_difference_of_the_two_passes() {
        // Two pieces; the second pass differs by +0.2 and −0.2 on two of four samples.
        let first = [(0, 1.0), (0, 1.1), (1, -0.5), (1, -0.4)];
        let second = [(2, 1.2), (2, 1.1), (3, -0.7), (3, -0.4)];
        let s: Vec<Sample> = first
            .iter()
            .chain(&second)
            .map(|(g, t)| sample(*g, *t))
            .collect();
        let floor = floor_mse(&s, 2).unwrap();
        assert!((floor - 0.5 * (0.04 + 0.04) / 4.0).abs() < 1e-12, "{floor}");
        // Without a second pass there is nothing to pair.
        assert_eq!(floor_mse(&s[..4], 2), None);
    }
}
