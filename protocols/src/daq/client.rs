//! [`DaqClient`]: a LabJack T-series DAQ over Modbus TCP, built from its [`DaqProfile`] (no
//! address appears here). Command-response reads of AINs and the quadrature counter, DAC
//! writes, the factory calibration, and the hardware-timed stream ([`DaqStream`]), whose
//! packets arrive unasked on the device's stream port. One call is one request and one
//! response (plus the stream's own socket); retries and the safe-state reaction belong to the
//! caller, which maps a [`StreamFault`] to a comms fault.

use super::profile::{DaqProfile, DaqType};
use super::stream::{AinCalibration, HEADER_BYTES, StreamFault, StreamPacket, StreamTracker};
use crate::error::{Error, ExceptionCode, RegisterRef};
use crate::profile::Table;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_modbus::client::{Context, Reader, Writer};
use tokio_modbus::prelude::{Slave, tcp};

/// How one analog input is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AinConfig {
    /// Bipolar range \[V\]: one of the profile's `ain.ranges_v`.
    pub range_v: f64,
    /// Negative channel for a differential input; `None`: single-ended.
    pub negative_ch: Option<u16>,
    /// Command-response resolution index (0 = the device's default).
    pub resolution_index: u16,
    /// Settling time \[µs\] (0 = automatic).
    pub settling_us: f64,
}

/// A stream to start: rate, scan list and packet size.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamConfig {
    /// Scans per second \[Hz\].
    pub scan_rate_hz: f64,
    /// Modbus addresses sampled each scan, in order (e.g. AIN0's 0, DIO0_EF_READ_A's 3000).
    pub scan_list: Vec<u16>,
    /// Samples per packet.
    pub samples_per_packet: u16,
    /// Stream resolution index (0 = the device's default).
    pub resolution_index: u32,
    /// Settling after the multiplexer switches \[µs\] (0 = automatic).
    pub settling_us: f64,
    /// Device buffer \[bytes\] (0 = the device's default).
    pub buffer_bytes: u32,
}

/// A client of one DAQ.
pub struct DaqClient {
    profile: Arc<DaqProfile>,
    ctx: Context,
    timeout: Duration,
}

impl std::fmt::Debug for DaqClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaqClient")
            .field("device", &self.profile.device.name)
            .finish_non_exhaustive()
    }
}

impl DaqClient {
    /// Connects to the device's Modbus port and checks its `PRODUCT_ID` against the profile.
    pub async fn connect(
        addr: SocketAddr,
        profile: Arc<DaqProfile>,
        timeout: Duration,
    ) -> Result<DaqClient, Error> {
        let ctx = tokio::time::timeout(
            timeout,
            tcp::connect_slave(addr, Slave(profile.transport.unit_id)),
        )
        .await
        .map_err(|_| Error::Timeout {
            context: format!("connect {addr}"),
            after: timeout,
        })?
        .map_err(|source| Error::Transport {
            context: format!("connect {addr}"),
            source,
        })?;
        let mut c = DaqClient {
            profile,
            ctx,
            timeout,
        };
        let id = c.product_id().await?;
        if id != c.profile.device.product_id {
            return Err(Error::Protocol {
                context: format!("connect {addr}"),
                reason: format!(
                    "PRODUCT_ID reads {id}, the profile '{}' expects {}",
                    c.profile.device.name, c.profile.device.product_id
                ),
            });
        }
        Ok(c)
    }

    /// The profile.
    pub fn profile(&self) -> &DaqProfile {
        &self.profile
    }

    /// `PRODUCT_ID`.
    pub async fn product_id(&mut self) -> Result<f32, Error> {
        Ok(f32::from_bits(self.read_u32("PRODUCT_ID", 0).await?))
    }

    /// The voltage of AIN `ch` \[V\] (command-response).
    pub async fn read_ain(&mut self, ch: u16) -> Result<f64, Error> {
        self.check_channel("AIN", ch, self.profile.ain.channels)?;
        Ok(f64::from(f32::from_bits(self.read_u32("AIN#", ch).await?)))
    }

    /// Sets AIN `ch`'s range, negative channel, resolution and settling, then reads each back.
    pub async fn configure_ain(&mut self, ch: u16, cfg: &AinConfig) -> Result<(), Error> {
        self.check_channel("AIN", ch, self.profile.ain.channels)?;
        let ain = &self.profile.ain;
        if !ain.ranges_v.contains(&cfg.range_v) {
            return Err(out_of_range(
                "ain.range_v",
                cfg.range_v,
                "V",
                format!("one of {:?}", ain.ranges_v),
            ));
        }
        if u32::from(cfg.resolution_index) > ain.resolution_index_max {
            return Err(out_of_range(
                "ain.resolution_index",
                cfg.resolution_index.into(),
                "",
                format!("max {}", ain.resolution_index_max),
            ));
        }
        let neg = cfg.negative_ch.unwrap_or(ain.single_ended_negative_ch);
        self.write_checked("AIN#_RANGE", ch, (cfg.range_v as f32).to_bits())
            .await?;
        self.write_checked("AIN#_NEGATIVE_CH", ch, neg.into())
            .await?;
        self.write_checked("AIN#_RESOLUTION_INDEX", ch, cfg.resolution_index.into())
            .await?;
        self.write_checked("AIN#_SETTLING_US", ch, (cfg.settling_us as f32).to_bits())
            .await
    }

    /// Configures the quadrature counter on the profile's phase A/B lines: both disabled,
    /// both given the quadrature index, both enabled, in that order (the index cannot change
    /// while enabled), each read back.
    pub async fn configure_quadrature(&mut self) -> Result<(), Error> {
        let q = self.profile.quadrature.clone();
        for dio in [q.phase_a_dio, q.phase_b_dio] {
            self.write_checked("DIO#_EF_ENABLE", dio, 0).await?;
        }
        for dio in [q.phase_a_dio, q.phase_b_dio] {
            self.write_checked("DIO#_EF_INDEX", dio, q.ef_index).await?;
        }
        for dio in [q.phase_a_dio, q.phase_b_dio] {
            self.write_checked("DIO#_EF_ENABLE", dio, 1).await?;
        }
        Ok(())
    }

    /// The quadrature count (signed, 4 counts per encoder line).
    pub async fn read_counter(&mut self) -> Result<i32, Error> {
        Ok(self
            .read_u32("DIO#_EF_READ_A", self.profile.quadrature.phase_a_dio)
            .await? as i32)
    }

    /// Sets DAC `ch` to `volts`, refused outside the profile's range before anything is sent.
    pub async fn write_dac(&mut self, ch: u16, volts: f64) -> Result<(), Error> {
        self.check_channel("DAC", ch, self.profile.dac.channels)?;
        let d = &self.profile.dac;
        if !(d.min_v..=d.max_v).contains(&volts) {
            return Err(out_of_range(
                &format!("DAC{ch}"),
                volts,
                "V",
                format!("{}..={} V", d.min_v, d.max_v),
            ));
        }
        self.write_u32("DAC#", ch, (volts as f32).to_bits()).await
    }

    /// DAC `ch`'s output as the device reports it \[V\].
    pub async fn read_dac(&mut self, ch: u16) -> Result<f64, Error> {
        self.check_channel("DAC", ch, self.profile.dac.channels)?;
        Ok(f64::from(f32::from_bits(self.read_u32("DAC#", ch).await?)))
    }

    /// The factory calibration of the ±10 V high-speed converter (the stream's), read from
    /// internal flash: write the block's address to the read pointer, then read.
    pub async fn read_calibration(&mut self) -> Result<AinCalibration, Error> {
        let cal = self.profile.calibration.clone();
        self.write_u32("INTERNAL_FLASH_READ_POINTER", 0, cal.flash_address)
            .await?;
        let at = self.profile.address("INTERNAL_FLASH_READ", 0)?;
        let words = self.read_words(at, 8, "INTERNAL_FLASH_READ").await?;
        AinCalibration::from_block(&words, 0).ok_or_else(|| Error::Protocol {
            context: "read calibration".into(),
            reason: "short calibration block".into(),
        })
    }

    /// Configures and starts a spontaneous stream, whose packets arrive on `stream_addr` (the
    /// device's stream port). The socket is opened first, `STREAM_ENABLE` written last.
    pub async fn start_stream(
        &mut self,
        cfg: &StreamConfig,
        stream_addr: SocketAddr,
    ) -> Result<DaqStream, Error> {
        self.check_stream(cfg)?;
        let socket = tokio::time::timeout(self.timeout, TcpStream::connect(stream_addr))
            .await
            .map_err(|_| Error::Timeout {
                context: format!("connect stream {stream_addr}"),
                after: self.timeout,
            })?
            .map_err(|source| Error::Transport {
                context: format!("connect stream {stream_addr}"),
                source,
            })?;
        let _ = socket.set_nodelay(true);
        let profile = Arc::clone(&self.profile);
        let s = &profile.stream;
        let target = s.auto_target_spontaneous;
        self.write_u32("STREAM_ENABLE", 0, 0)
            .await
            .or_else(ignore_not_running)?;
        self.write_u32("STREAM_SCANRATE_HZ", 0, (cfg.scan_rate_hz as f32).to_bits())
            .await?;
        self.write_u32("STREAM_NUM_ADDRESSES", 0, cfg.scan_list.len() as u32)
            .await?;
        self.write_u32(
            "STREAM_SAMPLES_PER_PACKET",
            0,
            cfg.samples_per_packet.into(),
        )
        .await?;
        self.write_u32("STREAM_SETTLING_US", 0, (cfg.settling_us as f32).to_bits())
            .await?;
        self.write_u32("STREAM_RESOLUTION_INDEX", 0, cfg.resolution_index)
            .await?;
        self.write_u32("STREAM_BUFFER_SIZE_BYTES", 0, cfg.buffer_bytes)
            .await?;
        self.write_u32("STREAM_AUTO_TARGET", 0, target).await?;
        self.write_u32("STREAM_NUM_SCANS", 0, 0).await?;
        self.write_u32("STREAM_DATATYPE", 0, 0).await?;
        for (i, a) in cfg.scan_list.iter().enumerate() {
            self.write_u32("STREAM_SCANLIST_ADDRESS#", i as u16, u32::from(*a))
                .await?;
        }
        self.write_checked("STREAM_ENABLE", 0, 1).await?;
        let buffer = if cfg.buffer_bytes == 0 {
            s.buffer_bytes_default
        } else {
            cfg.buffer_bytes
        };
        Ok(DaqStream {
            socket,
            addresses: cfg.scan_list.len(),
            codes: s.status,
            backlog_limit_bytes: buffer / 2,
            stall: stall_limit(cfg),
            tracker: StreamTracker::default(),
            period_s: 1.0 / cfg.scan_rate_hz,
            pending: Vec::with_capacity(4096),
            last_packet: std::time::Instant::now(),
        })
    }

    /// Stops the stream (writes `STREAM_ENABLE` = 0 and reads it back).
    pub async fn stop_stream(&mut self) -> Result<(), Error> {
        self.write_checked("STREAM_ENABLE", 0, 0).await
    }

    fn check_stream(&self, cfg: &StreamConfig) -> Result<(), Error> {
        let s = &self.profile.stream;
        let n = cfg.scan_list.len();
        if n == 0 || n > usize::from(s.max_addresses) {
            return Err(out_of_range(
                "stream.scan_list",
                n as f64,
                "addresses",
                format!("1..={}", s.max_addresses),
            ));
        }
        let rate = cfg.scan_rate_hz * n as f64;
        if !(cfg.scan_rate_hz > 0.0 && rate <= s.max_scan_rate_hz) {
            return Err(out_of_range(
                "stream.scan_rate_hz",
                cfg.scan_rate_hz,
                "Hz",
                format!(
                    "scan rate × {n} addresses ≤ {} samples/s",
                    s.max_scan_rate_hz
                ),
            ));
        }
        if cfg.samples_per_packet == 0 || cfg.samples_per_packet > s.max_samples_per_packet {
            return Err(out_of_range(
                "stream.samples_per_packet",
                cfg.samples_per_packet.into(),
                "",
                format!("1..={}", s.max_samples_per_packet),
            ));
        }
        if cfg.resolution_index > self.profile.ain.stream_resolution_index_max {
            return Err(out_of_range(
                "stream.resolution_index",
                cfg.resolution_index.into(),
                "",
                format!("max {}", self.profile.ain.stream_resolution_index_max),
            ));
        }
        if !(0.0..=self.profile.ain.stream_settling_us_max).contains(&cfg.settling_us) {
            return Err(out_of_range(
                "stream.settling_us",
                cfg.settling_us,
                "µs",
                format!("0..={}", self.profile.ain.stream_settling_us_max),
            ));
        }
        if cfg.buffer_bytes != 0
            && (!cfg.buffer_bytes.is_power_of_two() || cfg.buffer_bytes > s.buffer_bytes_max)
        {
            return Err(out_of_range(
                "stream.buffer_bytes",
                cfg.buffer_bytes.into(),
                "bytes",
                format!("0 or a power of 2 ≤ {}", s.buffer_bytes_max),
            ));
        }
        Ok(())
    }

    fn check_channel(&self, what: &str, ch: u16, n: u16) -> Result<(), Error> {
        if ch < n {
            return Ok(());
        }
        Err(Error::Unsupported {
            profile: self.profile.device.name.clone(),
            what: format!("{what}{ch} (it has {what}0..{what}{})", n - 1),
        })
    }

    pub(super) async fn read_u32(&mut self, name: &str, index: u16) -> Result<u32, Error> {
        let ty = self.profile.register(name)?.ty;
        let at = self.profile.address(name, index)?;
        let w = self.read_words(at, ty.words(), name).await?;
        Ok(match ty {
            DaqType::U16 => u32::from(w[0]),
            DaqType::U32 | DaqType::F32 => (u32::from(w[0]) << 16) | u32::from(w[1]),
        })
    }

    pub(super) async fn write_u32(
        &mut self,
        name: &str,
        index: u16,
        value: u32,
    ) -> Result<(), Error> {
        let ty = self.profile.register(name)?.ty;
        let at = self.profile.address(name, index)?;
        let words: Vec<u16> = match ty {
            DaqType::U16 => vec![value as u16],
            DaqType::U32 | DaqType::F32 => vec![(value >> 16) as u16, value as u16],
        };
        let reg = reg_ref(at, words.len() as u16, name, index);
        let reply =
            tokio::time::timeout(self.timeout, self.ctx.write_multiple_registers(at, &words)).await;
        flatten(reply, self.timeout, &reg)
    }

    /// Writes and reads back: a device that did not take the value is a sequence error.
    pub(super) async fn write_checked(
        &mut self,
        name: &str,
        index: u16,
        value: u32,
    ) -> Result<(), Error> {
        self.write_u32(name, index, value).await?;
        let got = self.read_u32(name, index).await?;
        if got == value {
            return Ok(());
        }
        Err(Error::Sequence {
            sequence: format!("write {}", name.replace('#', &index.to_string())),
            step: 0,
            reason: format!("wrote 0x{value:08X}, read back 0x{got:08X}"),
        })
    }

    async fn read_words(&mut self, at: u16, n: u16, name: &str) -> Result<Vec<u16>, Error> {
        let reg = reg_ref(at, n, name, 0);
        let reply =
            tokio::time::timeout(self.timeout, self.ctx.read_holding_registers(at, n)).await;
        let words = flatten(reply, self.timeout, &reg)?;
        if words.len() != usize::from(n) {
            return Err(Error::Protocol {
                context: format!("read {reg}"),
                reason: format!("{} words for {n}", words.len()),
            });
        }
        Ok(words)
    }
}

/// The longest silence a stream may keep before it counts as stalled: three packets' worth
/// of scans, and never under 100 ms (a host's scheduling hiccup is not a stall).
fn stall_limit(cfg: &StreamConfig) -> Duration {
    let per_packet_s =
        f64::from(cfg.samples_per_packet) / (cfg.scan_rate_hz * cfg.scan_list.len() as f64);
    Duration::from_secs_f64((3.0 * per_packet_s).max(0.1))
}

fn ignore_not_running(e: Error) -> Result<(), Error> {
    match e {
        Error::Exception { .. } => Ok(()),
        e => Err(e),
    }
}

fn out_of_range(signal: &str, value: f64, unit: &str, limit: String) -> Error {
    Error::OutOfRange {
        signal: signal.to_string(),
        value,
        unit: unit.to_string(),
        limit,
    }
}

fn reg_ref(address: u16, count: u16, name: &str, index: u16) -> RegisterRef {
    RegisterRef {
        table: Table::Holding,
        address,
        count,
        signal: Some(name.replace('#', &index.to_string())),
    }
}

type Reply<T> = Result<tokio_modbus::Result<T>, tokio::time::error::Elapsed>;

fn flatten<T>(reply: Reply<T>, after: Duration, reg: &RegisterRef) -> Result<T, Error> {
    match reply {
        Err(_) => Err(Error::Timeout {
            context: format!("{reg}"),
            after,
        }),
        Ok(Err(tokio_modbus::Error::Transport(source))) => Err(Error::Transport {
            context: format!("{reg}"),
            source,
        }),
        Ok(Err(tokio_modbus::Error::Protocol(p))) => Err(Error::Protocol {
            context: format!("{reg}"),
            reason: p.to_string(),
        }),
        Ok(Ok(Err(code))) => Err(Error::Exception {
            code: ExceptionCode(u8::from(code)),
            register: reg.clone(),
        }),
        Ok(Ok(Ok(v))) => Ok(v),
    }
}

/// A running stream: reads packets from the stream socket, checks each (format, status,
/// backlog) and counts scans. A silence past the stall limit, a failure code or an overrun is
/// a [`StreamFault`].
#[derive(Debug)]
pub struct DaqStream {
    pub(super) socket: TcpStream,
    pub(super) addresses: usize,
    pub(super) codes: super::profile::StreamStatusCodes,
    pub(super) backlog_limit_bytes: u32,
    pub(super) stall: Duration,
    pub(super) tracker: StreamTracker,
    pub(super) period_s: f64,
    /// Bytes read by [`DaqStream::drain`] that do not make a whole packet yet.
    pub(super) pending: Vec<u8>,
    /// When [`DaqStream::drain`] last completed a packet (the stream's start before).
    pub(super) last_packet: std::time::Instant,
}

/// Scans from one packet, each stamped with the DAQ's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanBatch {
    /// Time of the first whole scan in this batch on the device's scan clock \[s\] since the
    /// stream started: scan index × scan period, skipped scans included.
    pub t0_s: f64,
    /// The scan period \[s\].
    pub period_s: f64,
    /// The raw samples of the packet, scan after scan.
    pub packet: StreamPacket,
}

impl DaqStream {
    /// The next packet, or why the stream failed.
    pub async fn next(&mut self) -> Result<ScanBatch, StreamFault> {
        let mut header = [0u8; HEADER_BYTES];
        self.read_exact(&mut header).await?;
        let n = StreamPacket::sample_count(&header).map_err(StreamFault::Malformed)?;
        let mut data = vec![0u8; 2 * n];
        self.read_exact(&mut data).await?;
        let packet = StreamPacket::decode(&header, &data).map_err(StreamFault::Malformed)?;
        self.batch(packet)
    }

    /// Accounts a decoded packet and stamps it with the scan clock.
    pub(super) fn batch(&mut self, packet: StreamPacket) -> Result<ScanBatch, StreamFault> {
        let before = self.tracker.scans + self.tracker.skipped_scans;
        self.tracker.account(
            &packet,
            self.addresses,
            &self.codes,
            self.backlog_limit_bytes,
        )?;
        Ok(ScanBatch {
            t0_s: before as f64 * self.period_s,
            period_s: self.period_s,
            packet,
        })
    }

    /// What the packets reported so far.
    pub fn tracker(&self) -> &StreamTracker {
        &self.tracker
    }

    /// The stall limit in force.
    pub fn stall_limit(&self) -> Duration {
        self.stall
    }

    /// Sets the stall limit: for a reader whose device shares its host with heavier work (an
    /// emulation in a test beside real-time processes), where a late packet is not the fault
    /// under test.
    pub fn set_stall_limit(&mut self, limit: Duration) {
        self.stall = limit;
    }

    async fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), StreamFault> {
        match tokio::time::timeout(self.stall, self.socket.read_exact(buf)).await {
            Err(_) => Err(StreamFault::Stalled {
                waited_s: self.stall.as_secs_f64(),
                limit_s: self.stall.as_secs_f64(),
            }),
            Ok(Err(e)) => Err(StreamFault::Malformed(format!("stream socket: {e}"))),
            Ok(Ok(_)) => Ok(()),
        }
    }
}
