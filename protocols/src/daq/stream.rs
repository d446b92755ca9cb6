//! The hardware-timed stream's wire format and bookkeeping, pure: a spontaneous stream packet
//! (a Modbus TCP frame with function 76 that the device sends unasked) → [`StreamPacket`], the
//! device's status codes → [`StreamStatus`], and [`StreamTracker`], which counts backlog,
//! skipped scans and auto-recovery and says when a stream has failed.
//!
//! Packet layout (T-Series datasheet "Low-Level Stream"; the same offsets `async_labjack`'s
//! `process_stream` reads): bytes 0–1 transaction id, 2–3 protocol id, 4–5 length of what
//! follows, 6 unit id, 7 function 76, 8–9 not used here, 10–11 backlog \[bytes\], 12–13 status
//! code, 14–15 additional status (skipped scans after auto-recovery), then the samples, one
//! big-endian u16 each, scan after scan in scan-list order.

use super::profile::StreamStatusCodes;

/// Bytes before the samples.
pub const HEADER_BYTES: usize = 16;
/// The stream packets' function code.
pub const STREAM_FUNCTION: u8 = 76;

/// One spontaneous stream packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamPacket {
    /// Transaction id (counts packets).
    pub transaction: u16,
    /// Bytes still in the device's buffer after this packet.
    pub backlog_bytes: u16,
    /// Status code (0 = success).
    pub status: u16,
    /// Additional status: scans skipped, on the packet that ends auto-recovery.
    pub additional: u16,
    /// The samples.
    pub samples: Vec<u16>,
}

impl StreamPacket {
    /// Samples in a packet whose 16-byte header is `header`, or why the header is not a
    /// stream packet.
    pub fn sample_count(header: &[u8; HEADER_BYTES]) -> Result<usize, String> {
        if header[7] != STREAM_FUNCTION {
            return Err(format!(
                "function {} where a stream packet has 76",
                header[7]
            ));
        }
        let len = usize::from(u16::from_be_bytes([header[4], header[5]]));
        if len < 10 || len % 2 != 0 {
            return Err(format!("length field {len}: not 10 + 2 × samples"));
        }
        Ok((len - 10) / 2)
    }

    /// Decodes a packet from its header and sample bytes.
    pub fn decode(header: &[u8; HEADER_BYTES], data: &[u8]) -> Result<StreamPacket, String> {
        let n = Self::sample_count(header)?;
        if data.len() != 2 * n {
            return Err(format!(
                "{} sample bytes where the header says {}",
                data.len(),
                2 * n
            ));
        }
        let word = |i: usize| u16::from_be_bytes([header[i], header[i + 1]]);
        Ok(StreamPacket {
            transaction: word(0),
            backlog_bytes: word(10),
            status: word(12),
            additional: word(14),
            samples: data
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect(),
        })
    }

    /// Encodes the packet for unit `unit` (the emulation sends these).
    pub fn encode(&self, unit: u8) -> Vec<u8> {
        let len = 10 + 2 * self.samples.len() as u16;
        let mut out = Vec::with_capacity(HEADER_BYTES + 2 * self.samples.len());
        out.extend(self.transaction.to_be_bytes());
        out.extend([0, 0]);
        out.extend(len.to_be_bytes());
        out.extend([unit, STREAM_FUNCTION, 16, 0]);
        out.extend(self.backlog_bytes.to_be_bytes());
        out.extend(self.status.to_be_bytes());
        out.extend(self.additional.to_be_bytes());
        for s in &self.samples {
            out.extend(s.to_be_bytes());
        }
        out
    }
}

/// What a packet's status code means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamStatus {
    /// Data as scanned.
    Ok,
    /// The buffer overflowed: the device is discarding scans until it drains.
    AutoRecoverActive,
    /// Auto-recovery ended; `skipped` scans were lost.
    AutoRecoverEnd {
        /// Scans discarded.
        skipped: u16,
    },
    /// A burst completed.
    BurstComplete,
    /// The stream failed and stopped (scan overlap, recovery overflow, buffer full, or an
    /// unknown code).
    Failed(u16),
}

impl StreamStatus {
    /// Classifies a packet by the profile's codes.
    pub fn of(packet: &StreamPacket, codes: &StreamStatusCodes) -> StreamStatus {
        match packet.status {
            0 => StreamStatus::Ok,
            c if c == codes.auto_recover_active => StreamStatus::AutoRecoverActive,
            c if c == codes.auto_recover_end => StreamStatus::AutoRecoverEnd {
                skipped: packet.additional,
            },
            c if c == codes.burst_complete => StreamStatus::BurstComplete,
            c => StreamStatus::Failed(c),
        }
    }
}

/// Why a stream is no longer usable: the caller maps it to a comms fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StreamFault {
    /// No packet within the stall limit.
    #[error("stream stalled: no packet for {waited_s:.3} s (limit {limit_s:.3} s)")]
    Stalled {
        /// How long it waited \[s\].
        waited_s: f64,
        /// The limit \[s\].
        limit_s: f64,
    },
    /// The device reported a failure code.
    #[error("stream stopped by the device: status {0}")]
    DeviceStopped(u16),
    /// The device's buffer held more than the allowed share: the host is not keeping up.
    #[error("stream overrun: backlog {backlog_bytes} bytes over the limit {limit_bytes}")]
    Overrun {
        /// Backlog reported \[bytes\].
        backlog_bytes: u16,
        /// The limit \[bytes\].
        limit_bytes: u32,
    },
    /// Scans were lost to auto-recovery and the caller allows none.
    #[error("stream skipped {0} scans (auto-recovery)")]
    Skipped(u64),
    /// A packet broke the format.
    #[error("stream packet: {0}")]
    Malformed(String),
}

/// Counts what the stream's packets report, scan by scan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamTracker {
    /// Scans received.
    pub scans: u64,
    /// Scans the device discarded (auto-recovery).
    pub skipped_scans: u64,
    /// Auto-recovery episodes.
    pub recoveries: u64,
    /// Largest backlog seen \[bytes\].
    pub max_backlog_bytes: u16,
    /// Samples of a scan split across packets.
    carry: usize,
}

impl StreamTracker {
    /// Accounts one packet of a stream with `addresses` samples per scan; refuses overruns
    /// (backlog above `backlog_limit_bytes`) and device failures. Returns how many whole scans
    /// this packet completed.
    pub fn account(
        &mut self,
        packet: &StreamPacket,
        addresses: usize,
        codes: &StreamStatusCodes,
        backlog_limit_bytes: u32,
    ) -> Result<u64, StreamFault> {
        self.max_backlog_bytes = self.max_backlog_bytes.max(packet.backlog_bytes);
        if u32::from(packet.backlog_bytes) > backlog_limit_bytes {
            return Err(StreamFault::Overrun {
                backlog_bytes: packet.backlog_bytes,
                limit_bytes: backlog_limit_bytes,
            });
        }
        match StreamStatus::of(packet, codes) {
            StreamStatus::Failed(c) => return Err(StreamFault::DeviceStopped(c)),
            StreamStatus::AutoRecoverEnd { skipped } => {
                self.recoveries += 1;
                self.skipped_scans += u64::from(skipped);
            }
            _ => {}
        }
        let total = self.carry + packet.samples.len();
        self.carry = total % addresses.max(1);
        let whole = (total / addresses.max(1)) as u64;
        self.scans += whole;
        Ok(whole)
    }
}

/// One AIN calibration set of the device (positive and negative slope \[V/bit\], binary
/// centre, offset \[V\]), as stored in its flash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AinCalibration {
    /// Volts per bit above the centre.
    pub positive_slope: f64,
    /// Volts per bit below the centre (negative).
    pub negative_slope: f64,
    /// Binary code of 0 V.
    pub center: f64,
    /// Volts at code 0.
    pub offset: f64,
}

impl AinCalibration {
    /// Volts of a 16-bit stream code.
    pub fn volts(&self, code: u16) -> f64 {
        let b = f64::from(code);
        if b < self.center {
            (self.center - b) * self.negative_slope
        } else {
            (b - self.center) * self.positive_slope
        }
    }

    /// The code whose volts are nearest `v` (the emulation's converter), clamped to 16 bits.
    pub fn code(&self, v: f64) -> u16 {
        let b = if v < 0.0 {
            self.center - v / self.negative_slope
        } else {
            self.center + v / self.positive_slope
        };
        b.round().clamp(0.0, 65535.0) as u16
    }

    /// Decodes the HS set of gain index `gain` (0 = ±10 V) from the calibration block's
    /// big-endian float32 words.
    pub fn from_block(words: &[u16], gain: usize) -> Option<AinCalibration> {
        let f = |i: usize| {
            let hi = *words.get(2 * i)?;
            let lo = *words.get(2 * i + 1)?;
            Some(f64::from(f32::from_bits(
                (u32::from(hi) << 16) | u32::from(lo),
            )))
        };
        let base = 4 * gain;
        Some(AinCalibration {
            positive_slope: f(base)?,
            negative_slope: f(base + 1)?,
            center: f(base + 2)?,
            offset: f(base + 3)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes() -> StreamStatusCodes {
        StreamStatusCodes {
            auto_recover_active: 2940,
            auto_recover_end: 2941,
            scan_overlap: 2942,
            auto_recover_end_overflow: 2943,
            burst_complete: 2944,
            buffer_full: 2945,
        }
    }

    #[test]
    fn a_packet_round_trips_through_its_bytes() {
        let p = StreamPacket {
            transaction: 7,
            backlog_bytes: 8,
            status: 0,
            additional: 0,
            samples: vec![0x8000, 0x0102],
        };
        let bytes = p.encode(1);
        assert_eq!(
            bytes,
            [
                0, 7, 0, 0, 0, 14, 1, 76, 16, 0, 0, 8, 0, 0, 0, 0, 0x80, 0x00, 0x01, 0x02
            ]
        );
        let header: [u8; 16] = bytes[..16].try_into().unwrap();
        assert_eq!(StreamPacket::decode(&header, &bytes[16..]).unwrap(), p);
        let mut wrong = header;
        wrong[7] = 3;
        assert!(
            StreamPacket::sample_count(&wrong)
                .unwrap_err()
                .contains("function 3")
        );
    }

    #[test]
    fn the_tracker_counts_scans_across_packets_and_skipped_scans() {
        let mut t = StreamTracker::default();
        let mk = |n: usize, status: u16, additional: u16| StreamPacket {
            transaction: 0,
            backlog_bytes: 0,
            status,
            additional,
            samples: vec![0; n],
        };
        assert_eq!(t.account(&mk(3, 0, 0), 2, &codes(), 4096).unwrap(), 1);
        assert_eq!(t.account(&mk(3, 0, 0), 2, &codes(), 4096).unwrap(), 2);
        t.account(&mk(2, 2941, 40), 2, &codes(), 4096).unwrap();
        assert_eq!((t.scans, t.skipped_scans, t.recoveries), (4, 40, 1));
        assert_eq!(
            t.account(&mk(2, 2945, 0), 2, &codes(), 4096),
            Err(StreamFault::DeviceStopped(2945))
        );
        let over = StreamPacket {
            backlog_bytes: 5000,
            ..mk(2, 0, 0)
        };
        assert!(matches!(
            t.account(&over, 2, &codes(), 4096),
            Err(StreamFault::Overrun { .. })
        ));
    }

    #[test]
    fn nominal_calibration_maps_codes_to_volts_both_ways() {
        // T7 nominal ±10 V set (datasheet 20.0.1).
        let c = AinCalibration {
            positive_slope: 0.000315805780,
            negative_slope: -0.000315805800,
            center: 33523.0,
            offset: -10.586956522,
        };
        assert_eq!(c.volts(33523), 0.0);
        assert!((c.volts(0) - -10.5869).abs() < 1e-3);
        for v in [-9.9, -1.234, 0.0, 0.5, 9.9] {
            assert!(
                (c.volts(c.code(v)) - v).abs() <= 0.000316 / 2.0 + 1e-9,
                "{v}"
            );
        }
    }
}
