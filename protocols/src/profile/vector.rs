//! Test vectors: known encodings a profile is checked against.

use super::{Profile, validate};
use crate::error::Error;

/// A known encoding from a manual or from the design: registers → value, and/or RTU frames.
#[derive(Debug, Clone, PartialEq)]
pub struct TestVector {
    /// Signal name.
    pub signal: String,
    /// Registers in wire order.
    pub registers: Option<Vec<u16>>,
    /// The value, in the signal's declared unit.
    pub value: Option<f64>,
    /// Decimal places (for `scale_exp_from` signals).
    pub decimals: i32,
    /// Absolute tolerance on `value`.
    pub tolerance: f64,
    /// Complete RTU frames (CRC included) that carry the registers or address the signal.
    pub frames: Vec<Vec<u8>>,
    /// Where it comes from.
    pub note: Option<String>,
}

impl Profile {
    /// Re-checks every test vector (they are checked at load too); returns how many passed.
    pub fn check_test_vectors(&self) -> Result<usize, Error> {
        for (i, tv) in self.test_vectors.iter().enumerate() {
            validate::check_vector(self, i, tv)?;
        }
        Ok(self.test_vectors.len())
    }
}
