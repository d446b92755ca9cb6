//! The emulated stream: a thread keeps the scan clock (scan k at k / rate after the enable),
//! samples the scan list into the device buffer and sends spontaneous packets to the stream
//! client without ever blocking on it. When the client does not keep up the buffer fills and
//! the device goes into auto-recovery as a T7 does: new scans are discarded and counted, packets
//! carry the "auto-recover active" status, and once the buffer has drained to half the next
//! packet carries "auto-recover end" with the number of scans skipped, so the client's scan
//! clock stays true.

use super::DaqShared;
use super::image::CAL;
use protocols::daq::StreamPacket;
use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_modbus::ExceptionCode;

/// What the emulated stream did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StreamStats {
    /// Scans put in the buffer.
    pub scans: u64,
    /// Scans discarded in auto-recovery.
    pub skipped: u64,
    /// Packets sent.
    pub packets: u64,
}

#[derive(Debug, Default)]
struct Counters {
    scans: AtomicU64,
    skipped: AtomicU64,
    packets: AtomicU64,
}

/// The running stream (if any) and the connected stream client.
#[derive(Debug, Default)]
pub(crate) struct StreamCtl {
    run: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>>,
    client: Arc<Mutex<Option<std::net::TcpStream>>>,
    counters: Arc<Counters>,
}

impl StreamCtl {
    pub(crate) fn stop(&self) {
        let run = self
            .run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((flag, thread)) = run {
            flag.store(false, Ordering::Relaxed);
            let _ = thread.join();
        }
    }

    pub(crate) fn stats(&self) -> StreamStats {
        let c = &self.counters;
        StreamStats {
            scans: c.scans.load(Ordering::Relaxed),
            skipped: c.skipped.load(Ordering::Relaxed),
            packets: c.packets.load(Ordering::Relaxed),
        }
    }
}

/// Accepts stream clients (the newest one gets the packets) until `stop`.
pub(crate) async fn accept(
    listener: TcpListener,
    shared: Arc<DaqShared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            got = listener.accept() => {
                let Ok((sock, _)) = got else { continue };
                let _ = sock.set_nodelay(true);
                if let Ok(std) = sock.into_std() {
                    let _ = std.set_nonblocking(true);
                    *shared.stream.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(std);
                }
            }
        }
    }
}

/// The stream's configuration as the registers hold it at `STREAM_ENABLE`.
#[derive(Debug, Clone)]
struct Config {
    rate_hz: f64,
    scan_list: Vec<Source>,
    samples_per_packet: usize,
    buffer_samples: usize,
}

#[derive(Debug, Clone, Copy)]
enum Source {
    Ain(u16),
    CounterLow,
    Capture16,
}

fn config(shared: &DaqShared) -> Result<Config, ExceptionCode> {
    let p = &shared.profile;
    let img = shared.lock();
    let get = |n: &str, i: u16| img.stored(p, n, i);
    let rate_hz = f64::from(f32::from_bits(get("STREAM_SCANRATE_HZ", 0)));
    let n = get("STREAM_NUM_ADDRESSES", 0) as usize;
    let bad = ExceptionCode::IllegalDataValue;
    if n == 0
        || n > usize::from(p.stream.max_addresses)
        || !(rate_hz > 0.0 && rate_hz * n as f64 <= p.stream.max_scan_rate_hz)
    {
        return Err(bad);
    }
    let scan_list = (0..n as u16)
        .map(|i| {
            let a = get("STREAM_SCANLIST_ADDRESS#", i);
            let (reg, k) = p
                .at_address(u16::try_from(a).map_err(|_| bad)?)
                .ok_or(bad)?;
            match reg.name.as_str() {
                "AIN#" if k < p.ain.channels => Ok(Source::Ain(k)),
                "DIO#_EF_READ_A" if k == p.quadrature.phase_a_dio => Ok(Source::CounterLow),
                "STREAM_DATA_CAPTURE_16" => Ok(Source::Capture16),
                _ => Err(bad),
            }
        })
        .collect::<Result<_, _>>()?;
    let spp = match get("STREAM_SAMPLES_PER_PACKET", 0) as usize {
        0 => usize::from(p.stream.max_samples_per_packet),
        s if s <= usize::from(p.stream.max_samples_per_packet) => s,
        _ => return Err(bad),
    };
    let bytes = match get("STREAM_BUFFER_SIZE_BYTES", 0) {
        0 => p.stream.buffer_bytes_default,
        b if b.is_power_of_two() && b <= p.stream.buffer_bytes_max => b,
        _ => return Err(bad),
    };
    Ok(Config {
        rate_hz,
        scan_list,
        samples_per_packet: spp,
        buffer_samples: bytes as usize / 2,
    })
}

/// Starts the stream thread (refused while one runs, or for a bad configuration).
pub(crate) fn start(shared: &Arc<DaqShared>) -> Result<(), ExceptionCode> {
    let mut run = shared
        .stream
        .run
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if run.is_some() {
        return Ok(());
    }
    let cfg = config(shared)
        .inspect_err(|_| shared.lock().last_error = super::image::STREAM_CONFIG_INVALID)?;
    let flag = Arc::new(AtomicBool::new(true));
    let (f, s) = (Arc::clone(&flag), Arc::clone(shared));
    let thread = std::thread::Builder::new()
        .name("t7-stream".into())
        .spawn(move || Streamer::new(cfg, s).run(&f))
        .map_err(|_| ExceptionCode::ServerDeviceFailure)?;
    *run = Some((flag, thread));
    Ok(())
}

/// The stream thread's state: scan clock, device buffer, recovery and the packet in flight.
struct Streamer {
    cfg: Config,
    shared: Arc<DaqShared>,
    buffer: VecDeque<u16>,
    recovering: bool,
    skipped: u64,
    end_recovery: Option<u16>,
    out: Vec<u8>,
    sent: usize,
    transaction: u16,
}

impl Streamer {
    fn new(cfg: Config, shared: Arc<DaqShared>) -> Streamer {
        Streamer {
            buffer: VecDeque::with_capacity(cfg.buffer_samples),
            cfg,
            shared,
            recovering: false,
            skipped: 0,
            end_recovery: None,
            out: Vec::new(),
            sent: 0,
            transaction: 0,
        }
    }

    fn run(mut self, flag: &AtomicBool) {
        let start = Instant::now();
        let mut k: u64 = 0;
        while flag.load(Ordering::Relaxed) {
            let next = start + Duration::from_secs_f64((k + 1) as f64 / self.cfg.rate_hz);
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
                continue;
            }
            let due = ((now - start).as_secs_f64() * self.cfg.rate_hz) as u64;
            while k < due {
                self.scan();
                k += 1;
            }
            self.flush();
        }
    }

    /// One scan into the buffer, or counted as skipped when the buffer is full.
    fn scan(&mut self) {
        let n = self.cfg.scan_list.len();
        let c = &self.shared.stream.counters;
        if self.recovering && self.buffer.len() + n <= self.cfg.buffer_samples / 2 {
            self.recovering = false;
            self.end_recovery = Some(self.skipped.min(u64::from(u16::MAX)) as u16);
            self.skipped = 0;
        }
        if self.recovering || self.buffer.len() + n > self.cfg.buffer_samples {
            self.recovering = true;
            self.skipped += 1;
            c.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let sh = &self.shared;
        let mut img = sh.lock();
        for src in &self.cfg.scan_list {
            let v = match *src {
                Source::Ain(ch) => CAL.code(img.ain_volts(ch, &sh.bench, &sh.options)),
                Source::CounterLow => {
                    let count = img.counter(&sh.profile, &sh.bench) as i32 as u32;
                    img.capture_16 = (count >> 16) as u16;
                    count as u16
                }
                Source::Capture16 => img.capture_16,
            };
            self.buffer.push_back(v);
        }
        c.scans.fetch_add(1, Ordering::Relaxed);
    }

    /// Sends what the client's socket takes without blocking; forms packets as data allows.
    fn flush(&mut self) {
        let client = Arc::clone(&self.shared.stream.client);
        let mut client = client.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(sock) = client.as_mut() else { return };
        loop {
            if self.sent < self.out.len() {
                match sock.write(&self.out[self.sent..]) {
                    Ok(w) => self.sent += w,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                    Err(_) => {
                        *client = None;
                        return;
                    }
                }
            } else if self.buffer.len() >= self.cfg.samples_per_packet {
                self.next_packet();
            } else {
                return;
            }
        }
    }

    fn next_packet(&mut self) {
        let codes = self.shared.profile.stream.status;
        let samples: Vec<u16> = self.buffer.drain(..self.cfg.samples_per_packet).collect();
        let (status, additional) = match self.end_recovery.take() {
            Some(skipped) => (codes.auto_recover_end, skipped),
            None if self.recovering => (codes.auto_recover_active, 0),
            None => (0, 0),
        };
        let backlog = (2 * self.buffer.len()).min(usize::from(u16::MAX)) as u16;
        let packet = StreamPacket {
            transaction: self.transaction,
            backlog_bytes: backlog,
            status,
            additional,
            samples,
        };
        self.transaction = self.transaction.wrapping_add(1);
        self.out = packet.encode(self.shared.profile.transport.unit_id);
        self.sent = 0;
        self.shared
            .stream
            .counters
            .packets
            .fetch_add(1, Ordering::Relaxed);
    }
}
