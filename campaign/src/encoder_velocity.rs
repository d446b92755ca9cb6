//! The speed that drives the comparison's velocity replay: the centred difference of the
//! recorded encoder angle, not the drive's velocity estimate.
//!
//! A velocity replay integrates the speed it is given into the displacement the presliding
//! elements see. The drive's estimate is low-pass filtered (1 ms on the simulated drive), so its
//! integral lags the angle the bench went through, and against a presliding stiffness of
//! 1000 N m/rad a lag of a tenth of a milliradian is 0.1 N m. On the default simulated bench's
//! validation run the true GMS replayed from the drive's estimate left an MSE of 2.2e-2 N² m²,
//! from the encoder's centred difference 1.4e-3 (the plant's true speed sampled at 1 kHz left
//! 6.0e-2: sampled, it does not integrate to the displacement between samples either);
//! `cargo test -p campaign --test replay_floor -- --nocapture`.
//!
//! Its integral still drifts from the angle by up to a count per sample, so the comparison
//! replays it with [`Speed::Displacement`](friction::identify::procedures::output_error::Speed):
//! between two samples the speed runs from one centred value to the next plus a bump that moves
//! the model by exactly the encoder's displacement. That took the true GMS from 1.4e-3 to
//! 4.8e-4 N² m² (3.8e-6 on the plant's true angle and speed: the rest is the encoder's count).

use friction::identify::procedures::output_error::Segment;

/// Replaces `seg.v` by the centred difference of `seg.x` (one-sided at the ends); a segment
/// of fewer than two samples is left as it is.
pub fn from_encoder(seg: &mut Segment) {
    if seg.t.len().min(seg.x.len()) < 2 {
        return;
    }
    seg.v = bench_daemon::fitting::run_data::centred_speed(&seg.t, &seg.x);
}

/// The encoder's count \[rad\]: the smallest step of the recorded angle (0 when it never
/// moved).
pub fn count_of(samples: &[experiments::Sample]) -> f64 {
    samples
        .windows(2)
        .map(|w| (w[1].x - w[0].x).abs())
        .filter(|d| *d > 0.0)
        .reduce(f64::min)
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speed_is_the_centred_difference_of_the_angle() {
        let mut seg = Segment::from_columns(
            "test",
            &["t", "x", "v", "friction"],
            &[
                vec![0.0, 1.0, 2.0, 4.0],
                vec![0.0, 1.0, 3.0, 3.0],
                vec![9.0; 4],
                vec![0.0; 4],
            ],
        )
        .unwrap();
        from_encoder(&mut seg);
        assert_eq!(seg.v, vec![1.0, 1.5, 2.0 / 3.0, 0.0]);
    }
}
