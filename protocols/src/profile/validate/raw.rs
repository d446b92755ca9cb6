//! The profile's TOML as written: every table a serde type that refuses unknown keys, its
//! strings (types, roles, units, ...) kept as text for the validation to parse, so that each
//! rejection can name the file, the entry and the rule.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::profile) struct RawProfile {
    pub(super) device: RawDevice,
    #[serde(default)]
    pub(super) transport: RawTransport,
    #[serde(default)]
    pub(super) timing: RawTiming,
    #[serde(default)]
    pub(super) encoding: RawEncoding,
    #[serde(default)]
    pub(super) modes: BTreeMap<String, i64>,
    #[serde(default)]
    pub(super) status: BTreeMap<String, RawPattern>,
    #[serde(default, rename = "signal")]
    pub(super) signals: Vec<RawSignal>,
    #[serde(default, rename = "sequence")]
    pub(super) sequences: Vec<RawSequence>,
    #[serde(default, rename = "poll_group")]
    pub(super) poll_groups: Vec<RawPollGroup>,
    #[serde(default, rename = "test_vector")]
    pub(super) test_vectors: Vec<RawTestVector>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDevice {
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) vendor: Option<String>,
    pub(super) model: Option<String>,
    pub(super) source: Option<String>,
    pub(super) notes: Option<String>,
    #[serde(default)]
    pub(super) protocols: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTransport {
    #[serde(default = "one")]
    pub(super) unit_id: i64,
    pub(super) serial: Option<RawSerial>,
    #[serde(default)]
    pub(super) fc23: bool,
    #[serde(default = "max_read")]
    pub(super) max_read_registers: i64,
    #[serde(default = "max_write")]
    pub(super) max_write_registers: i64,
}

impl Default for RawTransport {
    fn default() -> Self {
        RawTransport {
            unit_id: 1,
            serial: None,
            fc23: false,
            max_read_registers: 125,
            max_write_registers: 123,
        }
    }
}

fn one() -> i64 {
    1
}
fn max_read() -> i64 {
    125
}
fn max_write() -> i64 {
    123
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSerial {
    pub(super) baud: i64,
    #[serde(default = "parity_even")]
    pub(super) parity: String,
    #[serde(default = "eight")]
    pub(super) data_bits: i64,
    #[serde(default = "one")]
    pub(super) stop_bits: i64,
}

fn parity_even() -> String {
    "even".into()
}
fn eight() -> i64 {
    8
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTiming {
    pub(super) timeout_ms: Option<f64>,
    pub(super) max_response_ms: Option<f64>,
    pub(super) inter_frame_gap_ms: Option<f64>,
    pub(super) turnaround_ms: Option<f64>,
    pub(super) retries: Option<i64>,
    pub(super) max_write_rate_hz: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEncoding {
    pub(super) word_order: Option<String>,
    #[serde(default)]
    pub(super) address_base: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPattern {
    pub(super) mask: i64,
    pub(super) value: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignal {
    pub(super) name: String,
    pub(super) role: Option<String>,
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) unverified: bool,
    pub(super) reg: RawReg,
    #[serde(default)]
    pub(super) eng: RawEng,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReg {
    #[serde(default = "holding")]
    pub(super) table: String,
    pub(super) address: i64,
    #[serde(rename = "type")]
    pub(super) ty: String,
    pub(super) word_order: Option<String>,
    pub(super) bits: Option<Vec<i64>>,
}

fn holding() -> String {
    "holding".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEng {
    pub(super) scale: Option<f64>,
    pub(super) offset: Option<f64>,
    pub(super) unit: Option<String>,
    pub(super) access: Option<String>,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) poll: Option<String>,
    pub(super) scale_exp_from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSequence {
    pub(super) name: String,
    pub(super) steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStep {
    pub(super) write: Option<String>,
    pub(super) expect: Option<String>,
    pub(super) wait_ms: Option<f64>,
    pub(super) value: Option<f64>,
    pub(super) mask: Option<i64>,
    pub(super) timeout_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPollGroup {
    pub(super) name: String,
    pub(super) rate_hz: f64,
    #[serde(default)]
    pub(super) merge_gap: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTestVector {
    pub(super) signal: String,
    pub(super) registers: Option<Vec<i64>>,
    pub(super) value: Option<f64>,
    #[serde(default)]
    pub(super) decimals: i64,
    pub(super) tolerance: Option<f64>,
    #[serde(default)]
    pub(super) frames: Vec<String>,
    pub(super) note: Option<String>,
}
