//! What a run read through a DAQ records of its stream before it starts (`bench_config.
//! daq_stream`, shown with the run and carried by its exports): the stream as the daemon
//! will ask for it, packets rounded down to whole scans, and the DAQ's profile. What the
//! stream did (scans received, skipped, the largest backlog) goes into the run's log at its
//! end.

use super::daq::stream_config;
use crate::config::{DaqConfig, PositionSource};
use protocols::{DaqProfile, Error};
use serde_json::{Value, json};

/// The stream's provenance of `cfg` on the device of profile `p`.
pub fn provenance(cfg: &DaqConfig, p: &DaqProfile) -> Result<Value, Error> {
    let s = stream_config(cfg, p)?;
    let t = &cfg.measured_torque;
    Ok(json!({
        "profile": cfg.profile,
        "device": p.device.name,
        "scan_rate_hz": s.scan_rate_hz,
        "scan_period_s": 1.0 / s.scan_rate_hz,
        "scan_list": s.scan_list,
        "samples_per_packet": s.samples_per_packet,
        "resolution_index": s.resolution_index,
        "settling_us": s.settling_us,
        "buffer_bytes": s.buffer_bytes,
        "torque": {
            "ain": t.ain,
            "negative_ain": t.negative_ain,
            "range_v": t.range_v,
            "nm_per_v": t.nm_per_v,
            "offset_v": t.offset_v,
        },
        "position": match cfg.position {
            PositionSource::Drive => json!({"source": "drive"}),
            PositionSource::Counter { counts_per_rev } =>
                json!({"source": "counter", "counts_per_rev": counts_per_rev}),
        },
        "skipped_scans_allowed": 0,
        "recorded": "every scan, one sample each, stamped on the DAQ's scan clock",
    }))
}
