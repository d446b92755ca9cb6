//! The chunk encoding of samples and model outputs (see `migrations/sqlite/0001_run_store.sql`).
//!
//! A sample chunk is columnar little-endian: `t, x, v, u_cmd, torque_motor, torque_sensor` as
//! `f64[n]` each, then `segment, flags` as `u32[n]` each (56 bytes per sample). A model-output
//! chunk is `f64[n]`. Values round-trip bit for bit.

use crate::types::Sample;

/// Bytes per encoded sample.
pub(crate) const SAMPLE_BYTES: usize = 6 * 8 + 2 * 4;

/// Most samples in one chunk.
pub(crate) const MAX_CHUNK: usize = 4096;

/// Encodes `samples` into a chunk.
pub(crate) fn encode_samples(samples: &[Sample]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * SAMPLE_BYTES);
    let cols: [fn(&Sample) -> f64; 6] = [
        |s| s.t,
        |s| s.x,
        |s| s.v,
        |s| s.u_cmd,
        |s| s.torque_motor,
        |s| s.torque_sensor,
    ];
    for col in cols {
        for s in samples {
            out.extend_from_slice(&col(s).to_le_bytes());
        }
    }
    for s in samples {
        out.extend_from_slice(&s.segment.to_le_bytes());
    }
    for s in samples {
        out.extend_from_slice(&s.flags.to_le_bytes());
    }
    out
}

fn f64_at(data: &[u8], i: usize) -> f64 {
    let mut b = [0; 8];
    b.copy_from_slice(&data[i * 8..i * 8 + 8]);
    f64::from_le_bytes(b)
}

fn u32_at(data: &[u8], i: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&data[i * 4..i * 4 + 4]);
    u32::from_le_bytes(b)
}

/// A decoded view of a sample chunk of `n` samples; `None` if `data` has the wrong length.
pub(crate) struct SampleChunk<'a> {
    n: usize,
    data: &'a [u8],
}

impl<'a> SampleChunk<'a> {
    /// Checks the length.
    pub(crate) fn new(n: usize, data: &'a [u8]) -> Option<SampleChunk<'a>> {
        (data.len() == n * SAMPLE_BYTES).then_some(SampleChunk { n, data })
    }

    /// Run time of sample `i`.
    pub(crate) fn t(&self, i: usize) -> f64 {
        f64_at(self.data, i)
    }

    /// Sample `i`.
    pub(crate) fn get(&self, i: usize) -> Sample {
        let n = self.n;
        let f = |col: usize| f64_at(self.data, col * n + i);
        let u = |col: usize| u32_at(&self.data[6 * 8 * n..], col * n + i);
        Sample {
            t: f(0),
            x: f(1),
            v: f(2),
            u_cmd: f(3),
            torque_motor: f(4),
            torque_sensor: f(5),
            segment: u(0),
            flags: u(1),
        }
    }
}

/// Encodes model outputs (`outputs[j * models + slot]` for j in `range`) of one model.
pub(crate) fn encode_outputs(
    outputs: &[f64],
    models: usize,
    slot: usize,
    range: std::ops::Range<usize>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(range.len() * 8);
    for j in range {
        out.extend_from_slice(&outputs[j * models + slot].to_le_bytes());
    }
    out
}

/// Output `i` of a model-output chunk.
pub(crate) fn output_at(data: &[u8], i: usize) -> f64 {
    f64_at(data, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_bit_for_bit() {
        let samples: Vec<Sample> = (0..5)
            .map(|k| Sample {
                t: k as f64 * 1e-3,
                x: -0.0,
                v: f64::NAN,
                u_cmd: f64::INFINITY,
                torque_motor: 1.0 / 3.0,
                torque_sensor: -(k as f64),
                segment: k,
                flags: u32::MAX - k,
            })
            .collect();
        let data = encode_samples(&samples);
        assert_eq!(data.len(), 5 * SAMPLE_BYTES);
        let chunk = SampleChunk::new(5, &data).unwrap();
        for (i, s) in samples.iter().enumerate() {
            let d = chunk.get(i);
            assert_eq!(d.t, s.t);
            assert_eq!(d.x.to_bits(), (-0.0_f64).to_bits());
            assert!(d.v.is_nan());
            assert_eq!(
                (d.u_cmd, d.torque_motor, d.torque_sensor),
                (s.u_cmd, s.torque_motor, s.torque_sensor)
            );
            assert_eq!((d.segment, d.flags), (s.segment, s.flags));
        }
        assert!(SampleChunk::new(4, &data).is_none());
        let outs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let m1 = encode_outputs(&outs, 2, 1, 1..3);
        assert_eq!([output_at(&m1, 0), output_at(&m1, 1)], [4.0, 6.0]);
    }
}
