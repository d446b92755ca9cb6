//! The DAQ as the bench's torque sensor: its hardware-timed stream started at connect, zeroed
//! before the run, and read without waiting at each tick.
//!
//! **Time alignment.** The DAQ stamps each scan with its own clock (scan index × scan
//! period, from the stream's start). [`ClockMap`] maps that clock onto the bench's: the
//! offset is the lower envelope of (arrival time − scan time) of each packet's last scan, the
//! transit of the fastest packet, which a late packet cannot pull; the envelope may rise by
//! at most [`DRIFT`] (a crystal's worst drift) so that it follows the two clocks apart. The
//! drive's feedback, stamped at the midpoint of its transaction, is paired with the torque
//! interpolated linearly between the two scans around that time ([`ScanWindow::at`]), or
//! with the newest scan when that time is past it (the scans are then at most one packet's
//! transit old).
//!
//! A stream that stalls, overruns, skips scans or is stopped by the device is an error the
//! loop's judge turns into a comms fault of the torque sensor; from then on every read fails,
//! so the run stops within its error budget and the drive is made safe.

use crate::config::{DaqConfig, PositionSource};
use protocols::daq::{
    AinCalibration, AinConfig, DriveOutputs, ScanBatch, StreamConfig, StreamFault,
};
use protocols::{DaqClient, DaqProfile, DaqStream, Error, TorqueReading};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod command;

/// How fast the clock map's offset may rise \[s/s\]: 100 ppm, above a quartz crystal's drift.
pub const DRIFT: f64 = 100e-6;

/// Scans kept for the alignment: more than a packet's worth at any rate the daemon runs.
const WINDOW: usize = 1024;

/// Scans held for the recorder between two ticks at most (6.5 s at 10 kHz): before the run's
/// first tick nobody takes them, and the oldest half goes when it is full.
const FRESH: usize = 1 << 16;

/// One scan, decoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scan {
    /// On the DAQ's scan clock \[s\].
    pub t_daq_s: f64,
    /// The torque input \[V\].
    pub volts: f64,
    /// The quadrature count, when the counter is in the scan list.
    pub counts: Option<i32>,
}

/// The DAQ's scan clock onto the bench's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClockMap {
    /// Bench time − DAQ time \[s\], and the bench time it was last updated.
    offset: Option<(f64, f64)>,
}

impl ClockMap {
    /// A packet whose last scan was taken at `t_daq_s` arrived at bench time `arrival_s`.
    pub fn observe(&mut self, t_daq_s: f64, arrival_s: f64) {
        let seen = arrival_s - t_daq_s;
        self.offset = Some(match self.offset {
            None => (seen, arrival_s),
            Some((o, at)) => {
                let risen = o + DRIFT * (arrival_s - at).max(0.0);
                (seen.min(risen), arrival_s)
            }
        });
    }

    /// Bench time of DAQ time `t_daq_s`, once a packet has been seen.
    pub fn bench_s(&self, t_daq_s: f64) -> Option<f64> {
        self.offset.map(|(o, _)| t_daq_s + o)
    }
}

/// The newest scans, in time order, for pairing with the drive's feedback.
#[derive(Debug, Clone, Default)]
pub struct ScanWindow {
    scans: std::collections::VecDeque<Scan>,
}

impl ScanWindow {
    /// Adds a scan (the oldest goes when the window is full).
    pub fn push(&mut self, s: Scan) {
        if self.scans.len() == WINDOW {
            self.scans.pop_front();
        }
        self.scans.push_back(s);
    }

    /// The newest scan.
    pub fn newest(&self) -> Option<&Scan> {
        self.scans.back()
    }

    /// The torque input's voltage at DAQ time `t` \[V\]: interpolated between the scans
    /// around it, the newest scan's when `t` is past it, the oldest's before the window.
    pub fn at(&self, t: f64) -> Option<f64> {
        self.value_at(t, |s| Some(s.volts))
    }

    /// The quadrature count at DAQ time `t`, aligned as [`Self::at`] (None without it).
    pub fn counts_at(&self, t: f64) -> Option<f64> {
        self.value_at(t, |s| s.counts.map(f64::from))
    }

    fn value_at(&self, t: f64, f: impl Fn(&Scan) -> Option<f64>) -> Option<f64> {
        let newest = self.scans.back()?;
        if t >= newest.t_daq_s {
            return f(newest);
        }
        let i = self.scans.partition_point(|s| s.t_daq_s <= t);
        if i == 0 {
            return f(&self.scans[0]);
        }
        let (a, b) = (&self.scans[i - 1], &self.scans[i]);
        let w = (t - a.t_daq_s) / (b.t_daq_s - a.t_daq_s);
        let (fa, fb) = (f(a)?, f(b)?);
        Some(fa + w * (fb - fa))
    }
}

/// A connected DAQ streaming the torque input.
#[derive(Debug)]
pub struct DaqIo {
    client: DaqClient,
    stream: DaqStream,
    cal: AinCalibration,
    nm_per_v: f64,
    /// The torque input's voltage at zero torque \[V\] (the certificate's, or measured).
    zero_v: f64,
    counter: bool,
    /// With `[daq.position] source = "counter"`: rad per count, and the position of count 0
    /// in the drive's frame (set at connect, [`Self::align_counter`]).
    counter_rad: Option<(f64, f64)>,
    /// Scans decoded since the loop last took them ([`Self::take_scans`]).
    fresh: Vec<Scan>,
    /// The stream's scan period \[s\] (as asked, then as the packets give it).
    period_s: f64,
    map: ClockMap,
    window: ScanWindow,
    batches: Vec<ScanBatch>,
    fault: Option<String>,
    /// The outputs wired to the drive (`[daq.drive_command]`).
    outputs: Option<DriveOutputs>,
    /// The mode the DAC commands the drive in and its analog scale (N m or rad/s per V).
    drive_scale: Option<(protocols::Mode, f64)>,
    /// The armed watchdog's timeout, and when the device last had a request from us.
    watchdog: Option<(Duration, Instant)>,
    /// The enable line as the daemon last set it.
    enable_high: bool,
}

/// What connecting the DAQ read back and configured, for the run's log.
pub type Notes = Vec<String>;

impl DaqIo {
    /// Connects, configures the torque input (and the counter), reads the calibration and
    /// starts the stream; returns the DAQ and what it set (the run's provenance).
    pub async fn connect(
        cfg: &DaqConfig,
        profile: Arc<DaqProfile>,
    ) -> Result<(DaqIo, Notes), Error> {
        let addr = resolve(&cfg.tcp)?;
        let stream_addr = match &cfg.stream_tcp {
            Some(s) => resolve(s)?,
            None => SocketAddr::new(addr.ip(), profile.transport.stream_port),
        };
        let mut client = DaqClient::connect(addr, profile, Duration::from_millis(200)).await?;
        let t = &cfg.measured_torque;
        client
            .configure_ain(
                t.ain,
                &AinConfig {
                    range_v: t.range_v,
                    negative_ch: t.negative_ain,
                    resolution_index: 0,
                    settling_us: 0.0,
                },
            )
            .await?;
        let counter = matches!(cfg.position, PositionSource::Counter { .. });
        if counter {
            client.configure_quadrature().await?;
        }
        let cal = client.read_calibration().await?;
        let mut notes = Notes::new();
        let outputs = cfg.drive_command.as_ref().map(|c| c.outputs());
        let drive_scale = match &cfg.drive_command {
            Some(c) => Some(c.scale().map_err(|reason| Error::Protocol {
                context: "DAQ drive command".into(),
                reason,
            })?),
            None => None,
        };
        if let (Some(c), Some(o), Some(scale)) = (&cfg.drive_command, &outputs, drive_scale) {
            notes.push(super::daq_outputs::prepare(&mut client, o, scale.0, c.watchdog_s).await?);
            notes.push(super::daq_outputs::command_note(c.dac, c.center_v, scale));
        }
        let scfg = stream_config(cfg, client.profile())?;
        let stream = client.start_stream(&scfg, stream_addr).await?;
        notes.insert(
            0,
            format!(
                "DAQ {}: stream {} Hz, scan list {:?}, {} samples/packet, resolution index {}, \
             settling {} µs (0 = automatic); AIN{} ±{} V {}, {} N m/V",
                client.profile().device.name,
                cfg.scan_rate_hz,
                scfg.scan_list,
                scfg.samples_per_packet,
                cfg.resolution_index,
                cfg.settling_us,
                t.ain,
                t.range_v,
                match t.negative_ain {
                    Some(n) => format!("differential against AIN{n}"),
                    None => "single-ended".into(),
                },
                t.nm_per_v,
            ),
        );
        Ok((
            DaqIo {
                client,
                stream,
                cal,
                nm_per_v: t.nm_per_v,
                zero_v: t.offset_v,
                counter,
                counter_rad: match cfg.position {
                    PositionSource::Counter { counts_per_rev } => {
                        Some((std::f64::consts::TAU / f64::from(counts_per_rev), 0.0))
                    }
                    PositionSource::Drive => None,
                },
                fresh: Vec::with_capacity(4096),
                period_s: 1.0 / cfg.scan_rate_hz,
                map: ClockMap::default(),
                window: ScanWindow::default(),
                batches: Vec::with_capacity(64),
                fault: None,
                outputs,
                drive_scale,
                watchdog: cfg
                    .drive_command
                    .as_ref()
                    .map(|c| (Duration::from_secs(c.watchdog_s.into()), Instant::now())),
                enable_high: false,
            },
            notes,
        ))
    }

    /// Measures the torque input's zero as the mean of `n` scans (the drive disabled, the
    /// shaft at rest: the caller's to check) and uses it from now on; returns it \[V\] and
    /// the scans' standard deviation \[V\].
    pub async fn zero(&mut self, n: u32) -> Result<(f64, f64), Error> {
        let (mut sum, mut sum2, mut k) = (0.0, 0.0, 0u32);
        while k < n {
            let batch = self.stream.next().await.map_err(stream_error)?;
            for s in self.decode(&batch) {
                if k < n {
                    sum += s.volts;
                    sum2 += s.volts * s.volts;
                    k += 1;
                }
            }
        }
        let mean = sum / f64::from(n);
        let sd = (sum2 / f64::from(n) - mean * mean).max(0.0).sqrt();
        self.zero_v = mean;
        Ok((mean, sd))
    }

    /// Takes the packets that arrived (bench time `now_s`) into the window.
    pub fn poll(&mut self, now_s: f64) -> Result<(), Error> {
        if let Some(f) = &self.fault {
            return Err(fault_error(f.clone()));
        }
        let mut batches = std::mem::take(&mut self.batches);
        batches.clear();
        let polled = self.stream.drain(&mut batches);
        if let Err(f) = polled.and_then(|()| self.no_skipped()) {
            self.fault = Some(f.to_string());
            return Err(fault_error(f.to_string()));
        }
        for b in &batches {
            self.period_s = b.period_s;
            let scans = self.decode(b);
            if let Some(last) = scans.last() {
                self.map.observe(last.t_daq_s, now_s);
            }
            if self.fresh.len() + scans.len() > FRESH {
                self.fresh.drain(..FRESH / 2);
            }
            for s in scans {
                self.window.push(s);
                self.fresh.push(s);
            }
        }
        self.batches = batches;
        Ok(())
    }

    /// The torque at bench time `t_s` (polled at `now_s`), aligned as the module says; the
    /// heartbeat is the number of scans received.
    pub fn reading_at(&mut self, t_s: f64, now_s: f64) -> Result<TorqueReading, Error> {
        self.poll(now_s)?;
        let volts = match self.map.bench_s(0.0) {
            Some(origin) => self.window.at(t_s - origin),
            None => None,
        };
        // Before the first packet of the run there is no sample: a stale reading, which the
        // judge's stall rule bounds.
        let volts = volts.unwrap_or(self.zero_v);
        Ok(TorqueReading {
            torque_nm: (volts - self.zero_v) * self.nm_per_v,
            status: None,
            valid: None,
            fault: None,
            heartbeat: Some(self.stream.tracker().scans),
        })
    }

    /// Moves the scans decoded since the last call into `out`, each stamped on the bench's
    /// clock and converted (torque, and the counter's position in the drive's frame).
    pub fn take_scans(&mut self, out: &mut Vec<super::io::AlignedScan>) {
        let Some(origin) = self.map.bench_s(0.0) else {
            return;
        };
        let (zero_v, nm_per_v, counter) = (self.zero_v, self.nm_per_v, self.counter_rad);
        out.extend(self.fresh.drain(..).map(|s| {
            super::io::AlignedScan {
                t_s: origin + s.t_daq_s,
                t_daq_s: s.t_daq_s,
                torque_nm: (s.volts - zero_v) * nm_per_v,
                position_rad: counter
                    .zip(s.counts)
                    .map(|((k, x0), c)| x0 + k * f64::from(c)),
            }
        }));
    }

    /// The scan period \[s\].
    pub fn scan_period_s(&self) -> f64 {
        self.period_s
    }

    /// Puts the counter's count 0 where the drive reads `drive_x` now (count `now`), so that
    /// the counter's position is in the drive's frame: a position command, written to the
    /// drive, then means the same place. A note for the run's log.
    pub fn align_counter(&mut self, drive_x: f64, now: i32) -> Option<String> {
        let (k, x0) = self.counter_rad.as_mut()?;
        *x0 = drive_x - *k * f64::from(now);
        Some(format!(
            "position from the DAQ's quadrature counter ({} counts/rev), count {now} aligned to \
             the drive's {drive_x:.6} rad at connect",
            (std::f64::consts::TAU / *k).round()
        ))
    }

    /// The counter's position at bench time `t_s` in the drive's frame, aligned as the
    /// torque (None: no counter, or no scan yet).
    pub fn position_at(&self, t_s: f64) -> Option<f64> {
        let (k, x0) = self.counter_rad?;
        let origin = self.map.bench_s(0.0)?;
        Some(x0 + k * self.window.counts_at(t_s - origin)?)
    }

    /// The count now, over Modbus (the stream's scans are not decoded at connect).
    pub async fn read_counter(&mut self) -> Result<i32, Error> {
        let r = self.client.read_counter().await;
        self.fed(r)
    }

    /// Stops the stream (best effort: the stop path's own deadline bounds it).
    pub async fn stop(&mut self) -> Result<(), Error> {
        self.client.stop_stream().await
    }

    /// The outputs wired to the drive made safe and read back (nothing to do without them).
    pub async fn make_outputs_safe(&mut self) -> Result<(), Error> {
        match self.outputs {
            Some(o) => {
                let r = self.client.make_outputs_safe(&o).await;
                self.enable_high = false;
                self.fed(r).map(drop)
            }
            None => Ok(()),
        }
    }

    /// The outputs to the drive as read back now, for the run's log (empty without them).
    pub async fn outputs_line(&mut self) -> String {
        let Some(o) = self.outputs else {
            return String::new();
        };
        match self.client.read_outputs(&o).await {
            Ok(r) => format!(
                "; outputs read back at the end: DAC{} {} V{}",
                o.dac,
                r.dac_v,
                match (o.enable_dio, r.enable) {
                    (Some(l), Some(on)) => format!(", DIO{l} {}", if on { "HIGH" } else { "low" }),
                    _ => String::new(),
                }
            ),
            Err(e) => format!("; outputs not read back at the end: {e}"),
        }
    }

    /// The enable line raised (nothing to do without one).
    pub async fn raise_enable(&mut self) -> Result<(), Error> {
        match self.outputs.and_then(|o| o.enable_dio) {
            Some(line) => {
                let r = self.client.set_dio(line, true).await;
                self.enable_high = r.is_ok();
                self.fed(r)
            }
            None => Ok(()),
        }
    }

    /// Feeds the armed watchdog when a quarter of its timeout passed since the last request:
    /// the stream's packets go from the device, and only requests to it count. The outputs
    /// are read back: an enable line not as the daemon set it (the watchdog fired, the
    /// device restarted) is an error, the run stops.
    pub async fn keep_alive(&mut self) -> Result<(), Error> {
        let (Some((timeout, last)), Some(o)) = (self.watchdog, self.outputs) else {
            return Ok(());
        };
        if last.elapsed() < timeout / 4 {
            return Ok(());
        }
        let read = self.client.read_outputs(&o).await;
        let read = self.fed(read)?;
        match (o.enable_dio, read.enable) {
            // A state the drive is not in, not a transient: the tick stops the run on it.
            (Some(l), Some(on)) if on != self.enable_high => Err(Error::Sequence {
                sequence: "drive enable on the DAQ".into(),
                step: 0,
                reason: format!(
                    "the drive's enable line DIO{l} reads {} during the run, not as the daemon \
                     set it (the DAQ's watchdog, or a restart)",
                    if on { "high" } else { "low" }
                ),
            }),
            _ => Ok(()),
        }
    }

    /// `r`, noting that the device had a request.
    fn fed<T>(&mut self, r: Result<T, Error>) -> Result<T, Error> {
        if let Some((_, last)) = &mut self.watchdog {
            *last = Instant::now();
        }
        r
    }

    /// What the stream reported so far.
    pub fn tracker(&self) -> &protocols::daq::StreamTracker {
        self.stream.tracker()
    }

    /// The daemon allows no skipped scan: every scan is part of the record.
    fn no_skipped(&self) -> Result<(), StreamFault> {
        match self.stream.tracker().skipped_scans {
            0 => Ok(()),
            n => Err(StreamFault::Skipped(n)),
        }
    }

    /// The scans of a batch (whole scans only: packets hold whole scans, see
    /// [`stream_config`]).
    fn decode(&self, b: &ScanBatch) -> Vec<Scan> {
        let per = if self.counter { 3 } else { 1 };
        b.packet
            .samples
            .chunks_exact(per)
            .enumerate()
            .map(|(i, s)| Scan {
                t_daq_s: b.t0_s + i as f64 * b.period_s,
                volts: self.cal.volts(s[0]),
                counts: self
                    .counter
                    .then(|| ((u32::from(s[2]) << 16) | u32::from(s[1])) as i32),
            })
            .collect()
    }
}

/// A zero needs the drive disabled and the shaft at rest: enabled, or turning faster than
/// 0.1 % of the bench's velocity limit, is refused with what was read; `what` names the zero
/// (`DAQ zero`, `torque sensor zero`).
pub fn check_at_rest(
    fb: &protocols::DriveFeedback,
    velocity_limit: f64,
    what: &str,
) -> Result<(), String> {
    if fb.enabled == Some(true) {
        return Err(format!(
            "{what}: the drive reads enabled; the zero is measured with it disabled"
        ));
    }
    match turning(fb, velocity_limit) {
        Some(v) => Err(format!(
            "{what}: the shaft turns at {v} rad/s (at rest means under {} rad/s)",
            1e-3 * velocity_limit
        )),
        None => Ok(()),
    }
}

/// The shaft's speed \[rad/s\] when it turns faster than a zero allows (0.1 % of the bench's
/// velocity limit).
pub fn turning(fb: &protocols::DriveFeedback, velocity_limit: f64) -> Option<f64> {
    fb.velocity_rad_s
        .filter(|v| v.abs() > 1e-3 * velocity_limit)
}

/// The stream `cfg` asks for: the torque input, then the counter's low and high words; a
/// packet holds whole scans (one unless `samples_per_packet` asks for more).
pub fn stream_config(cfg: &DaqConfig, p: &DaqProfile) -> Result<StreamConfig, Error> {
    let mut scan_list = vec![p.address("AIN#", cfg.measured_torque.ain)?];
    if matches!(cfg.position, PositionSource::Counter { .. }) {
        scan_list.push(p.address("DIO#_EF_READ_A", p.quadrature.phase_a_dio)?);
        scan_list.push(p.address("STREAM_DATA_CAPTURE_16", 0)?);
    }
    let n = scan_list.len() as u16;
    let asked = cfg.samples_per_packet.max(n);
    Ok(StreamConfig {
        scan_rate_hz: cfg.scan_rate_hz,
        samples_per_packet: asked - asked % n,
        scan_list,
        resolution_index: cfg.resolution_index,
        settling_us: cfg.settling_us,
        buffer_bytes: cfg.buffer_bytes,
    })
}

fn resolve(addr: &str) -> Result<SocketAddr, Error> {
    use std::net::ToSocketAddrs;
    addr.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| Error::Protocol {
            context: format!("[daq] address {addr}"),
            reason: "not a host:port that resolves".into(),
        })
}

fn stream_error(f: StreamFault) -> Error {
    fault_error(f.to_string())
}

fn fault_error(detail: String) -> Error {
    Error::Protocol {
        context: "DAQ".into(),
        reason: detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_map_takes_the_fastest_packet_and_follows_drift_at_most_100_ppm() {
        let mut m = ClockMap::default();
        m.observe(0.010, 5.0105); // transit 0.5 ms
        m.observe(0.020, 5.0201); // the fastest: 0.1 ms
        m.observe(0.030, 5.0350); // a late packet does not pull it
        assert!((m.bench_s(0.0).unwrap() - 5.0001).abs() < 1e-5);
        // 10 s later every packet arrives 2 ms later (the clocks drifted 200 ppm): the map
        // rises by 100 ppm × 10 s = 1 ms, no more.
        m.observe(10.030, 15.0321);
        assert!((m.bench_s(0.0).unwrap() - 5.0011).abs() < 1e-5);
    }

    #[test]
    fn the_drive_time_is_paired_with_the_scans_around_it() {
        let mut w = ScanWindow::default();
        assert_eq!(w.at(0.0), None);
        for k in 0..10 {
            w.push(Scan {
                t_daq_s: k as f64 * 1e-3,
                volts: k as f64,
                counts: None,
            });
        }
        assert_eq!(w.at(2.5e-3), Some(2.5));
        assert_eq!(w.at(4e-3), Some(4.0));
        assert_eq!(w.at(1.0), Some(9.0), "past the newest: the newest");
        assert_eq!(w.at(-1.0), Some(0.0), "before the window: the oldest");
    }
}
