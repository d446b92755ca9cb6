//! Where a link goes ([`Endpoint`]), how it behaves ([`LinkConfig`], from a device profile),
//! and what it counted ([`LinkStats`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::profile::{Profile, SerialSettings};

/// Where a link goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// Modbus TCP to `host:port`.
    Tcp(String),
    /// Modbus RTU on a serial device path (`/dev/ttyUSB0`, `/dev/pts/3`).
    Serial {
        /// Device path.
        path: PathBuf,
        /// Line settings.
        settings: SerialSettings,
    },
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
            Endpoint::Serial { path, settings } => {
                write!(f, "rtu:{}@{}", path.display(), settings.baud)
            }
        }
    }
}

/// How a link behaves. Build it from a profile with [`LinkConfig::tcp`] or
/// [`LinkConfig::serial`] and adjust fields as needed.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// Timeout of one request (and of a TCP connect).
    pub timeout: Duration,
    /// Longest a device may take to answer; after a failure the link stays quiet until this
    /// long after the failed request was sent.
    pub max_response: Duration,
    /// Silence kept between a reply and the next request.
    pub gap: Duration,
}

impl LinkConfig {
    /// TCP with the profile's timing (no inter-frame gap on TCP).
    pub fn tcp(addr: impl Into<String>, profile: &Profile) -> LinkConfig {
        LinkConfig {
            endpoint: Endpoint::Tcp(addr.into()),
            timeout: profile.timing.timeout,
            max_response: profile.timing.max_response,
            gap: Duration::ZERO,
        }
    }

    /// RTU on `path` with the profile's serial settings (baud overridden when given) and
    /// timing; the gap is the profile's, or t3.5 at that baud.
    pub fn serial(path: impl Into<PathBuf>, baud: Option<u32>, profile: &Profile) -> LinkConfig {
        let mut settings = profile
            .transport
            .serial
            .unwrap_or_else(SerialSettings::default_rtu);
        if let Some(b) = baud {
            settings.baud = b;
        }
        LinkConfig {
            endpoint: Endpoint::Serial {
                path: path.into(),
                settings,
            },
            timeout: profile.timing.timeout,
            max_response: profile.timing.max_response,
            gap: profile.timing.gap(Some(&settings)),
        }
    }
}

/// Counters of what happened on a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    /// Requests sent.
    pub requests: u64,
    /// Requests answered with a matching, well-formed reply.
    pub ok: u64,
    /// Modbus exception replies.
    pub exceptions: u64,
    /// Requests that got no reply in time.
    pub timeouts: u64,
    /// Replies whose CRC was wrong.
    pub crc_errors: u64,
    /// Replies that were incomplete, malformed or not the answer to the request (unit,
    /// function, echo or byte count mismatch).
    pub framing_errors: u64,
    /// I/O failures (connect refused, port gone, connection reset).
    pub transport_errors: u64,
    /// Times the link was dropped to resynchronise.
    pub resyncs: u64,
    /// Successful reopens after a resync.
    pub reopens: u64,
    /// Late replies to earlier requests (serial links: another unit or function, CRC intact)
    /// dropped while waiting for the real reply.
    pub stale_replies: u64,
}
