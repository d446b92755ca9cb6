//! Test helpers: a real Modbus slave (tokio-modbus server) over a register image, served on a
//! TCP socket (port 0) or on a pty, a pty bridge that can corrupt replies, and the pymodbus
//! peer. Nothing here mocks the client: every test sends real Modbus bytes.

#![allow(dead_code)]

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use protocols::{Profile, Role};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_modbus::server::Service;
use tokio_modbus::{ExceptionCode, Request, Response, SlaveRequest};
use tokio_serial::SerialStream;

/// Register image of one unit.
#[derive(Debug, Clone, Default)]
pub struct Image {
    /// Holding registers; addresses beyond the end answer "illegal data address".
    pub holding: Vec<u16>,
    /// Coils.
    pub coils: Vec<bool>,
}

/// Called after every write to a unit, to emulate device behaviour.
pub type Hook = Box<dyn Fn(&mut Image) + Send + Sync>;

/// One unit: its image and behaviour.
pub struct Unit {
    pub image: Image,
    pub hook: Option<Hook>,
}

/// Everything a slave holds, behind a std mutex (never held across an await).
#[derive(Default)]
pub struct SlaveState {
    pub units: HashMap<u8, Unit>,
    /// Delay the next reply by this much.
    pub delay_next: Option<Duration>,
    /// Answer the next write with a wrong echo address.
    pub bad_echo_next: bool,
    /// Answer the next register read with one register too few.
    pub short_next: bool,
    /// Arrival time of every request.
    pub arrivals: Vec<Instant>,
    /// Emulate RS-485 wire timing at this baud: each reply waits for the request's and the
    /// reply's characters (11 bits each) plus t3.5 (a pty has no timing of its own).
    pub wire_baud: Option<u32>,
}

/// Bytes of an RTU request and of its reply.
fn rtu_sizes(req: &Request<'_>, reply: &Reply) -> (usize, usize) {
    let out = match req {
        Request::WriteMultipleRegisters(_, d) => 9 + 2 * d.len(),
        Request::ReadWriteMultipleRegisters(_, _, _, d) => 13 + 2 * d.len(),
        _ => 8,
    };
    let back = match reply {
        Ok(Some(Response::ReadHoldingRegisters(v)))
        | Ok(Some(Response::ReadWriteMultipleRegisters(v))) => 5 + 2 * v.len(),
        Ok(Some(_)) => 8,
        Ok(None) => 0,
        Err(_) => 5,
    };
    (out, back)
}

/// Sleeps until `deadline` accurately (the tokio timer rounds up to whole milliseconds).
async fn precise_sleep_until(deadline: Instant) {
    let slack = Duration::from_millis(1);
    if deadline.saturating_duration_since(Instant::now()) > slack {
        tokio::time::sleep_until(deadline - slack).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

impl SlaveState {
    pub fn with_unit(mut self, id: u8, holding: Vec<u16>, hook: Option<Hook>) -> SlaveState {
        self.units.insert(
            id,
            Unit {
                image: Image {
                    holding,
                    coils: vec![false; 16],
                },
                hook,
            },
        );
        self
    }
}

pub type Shared = Arc<Mutex<SlaveState>>;

/// The tokio-modbus `Service` over the images.
#[derive(Clone)]
pub struct ImageService(pub Shared);

type Reply = Result<Option<Response>, ExceptionCode>;

fn span(len: usize, a: u16, n: usize) -> Result<std::ops::Range<usize>, ExceptionCode> {
    let a = usize::from(a);
    if n == 0 || a + n > len {
        return Err(ExceptionCode::IllegalDataAddress);
    }
    Ok(a..a + n)
}

fn handle(st: &mut SlaveState, req: SlaveRequest<'static>) -> Reply {
    st.arrivals.push(Instant::now());
    let bad_echo = std::mem::take(&mut st.bad_echo_next);
    let short = std::mem::take(&mut st.short_next);
    let Some(unit) = st.units.get_mut(&req.slave) else {
        return Ok(None);
    };
    let img = &mut unit.image;
    let mut wrote = false;
    let resp = match req.request {
        Request::ReadHoldingRegisters(a, n) => {
            let r = span(img.holding.len(), a, n.into())?;
            let mut v = img.holding[r].to_vec();
            if short {
                v.pop();
            }
            Response::ReadHoldingRegisters(v)
        }
        Request::ReadCoils(a, n) => {
            let r = span(img.coils.len(), a, n.into())?;
            Response::ReadCoils(img.coils[r].to_vec())
        }
        Request::WriteSingleRegister(a, w) => {
            let r = span(img.holding.len(), a, 1)?;
            img.holding[r.start] = w;
            wrote = true;
            Response::WriteSingleRegister(if bad_echo { a.wrapping_add(1) } else { a }, w)
        }
        Request::WriteMultipleRegisters(a, d) => {
            let r = span(img.holding.len(), a, d.len())?;
            img.holding[r].copy_from_slice(&d);
            wrote = true;
            Response::WriteMultipleRegisters(
                if bad_echo { a.wrapping_add(1) } else { a },
                d.len() as u16,
            )
        }
        Request::ReadWriteMultipleRegisters(ra, rn, wa, d) => {
            let w = span(img.holding.len(), wa, d.len())?;
            let r = span(img.holding.len(), ra, rn.into())?;
            img.holding[w].copy_from_slice(&d);
            if let Some(h) = &unit.hook {
                h(img);
            }
            Response::ReadWriteMultipleRegisters(img.holding[r].to_vec())
        }
        Request::WriteSingleCoil(a, c) => {
            let r = span(img.coils.len(), a, 1)?;
            img.coils[r.start] = c;
            wrote = true;
            Response::WriteSingleCoil(a, c)
        }
        _ => return Err(ExceptionCode::IllegalFunction),
    };
    if wrote && let Some(h) = &unit.hook {
        h(img);
    }
    Ok(Some(resp))
}

impl Service for ImageService {
    type Request = SlaveRequest<'static>;
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Pin<Box<dyn Future<Output = Reply> + Send>>;

    fn call(&self, req: Self::Request) -> Self::Future {
        let arrived = Instant::now();
        let (reply, delay, wire) = {
            let mut st = self.0.lock().unwrap();
            let delay = st.delay_next.take();
            let request = req.request.clone();
            let reply = handle(&mut st, req);
            let wire = st.wire_baud.map(|baud| {
                let (out, back) = rtu_sizes(&request, &reply);
                let t_char = 11.0 / f64::from(baud);
                let t35 = if baud > 19_200 { 1.75e-3 } else { 3.5 * t_char };
                Duration::from_secs_f64((out + back) as f64 * t_char + t35)
            });
            (reply, delay, wire)
        };
        Box::pin(async move {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            if let Some(w) = wire {
                precise_sleep_until(arrived + w).await;
            }
            reply
        })
    }
}

/// A TCP stream that counts itself, so a test can wait for connections to be gone.
struct Counted {
    inner: TcpStream,
    live: Arc<(AtomicUsize, Notify)>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.0.fetch_sub(1, Ordering::SeqCst);
        self.live.1.notify_waiters();
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A tokio-modbus TCP server on 127.0.0.1:0.
pub struct TcpSlave {
    pub addr: SocketAddr,
    pub state: Shared,
    server: Arc<tokio_modbus::server::tcp::Server>,
    task: JoinHandle<()>,
    live: Arc<(AtomicUsize, Notify)>,
}

impl TcpSlave {
    pub async fn start(state: SlaveState) -> TcpSlave {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Arc::new(tokio_modbus::server::tcp::Server::new(listener));
        let state = Arc::new(Mutex::new(state));
        let live = Arc::new((AtomicUsize::new(0), Notify::new()));
        let task = Self::spawn(server.clone(), state.clone(), live.clone());
        TcpSlave {
            addr,
            state,
            server,
            task,
            live,
        }
    }

    fn spawn(
        server: Arc<tokio_modbus::server::tcp::Server>,
        state: Shared,
        live: Arc<(AtomicUsize, Notify)>,
    ) -> JoinHandle<()> {
        tokio::spawn(async move {
            let on_connected = |stream: TcpStream, _addr: SocketAddr| {
                let svc = ImageService(state.clone());
                let live = live.clone();
                async move {
                    let _ = stream.set_nodelay(true);
                    live.0.fetch_add(1, Ordering::SeqCst);
                    Ok(Some((
                        svc,
                        Counted {
                            inner: stream,
                            live,
                        },
                    )))
                }
            };
            let _ = server.serve(&on_connected, |_e| {}).await;
        })
    }

    /// Drops every open connection (the listener stays), and waits until they are closed.
    pub async fn disconnect_all(&mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
        loop {
            let notified = self.live.1.notified();
            if self.live.0.load(Ordering::SeqCst) == 0 {
                break;
            }
            tokio::time::timeout(Duration::from_secs(5), notified)
                .await
                .expect("connections did not close");
        }
        self.task = Self::spawn(self.server.clone(), self.state.clone(), self.live.clone());
    }

    pub fn endpoint(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for TcpSlave {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Two pty pairs joined by a relay: a device opens `device_path`, the client `client_path`.
/// Bytes from the device to the client can be corrupted on demand (last byte of the next
/// chunk flipped), which a tokio-modbus server cannot do by itself.
pub struct PtyBridge {
    pub device_path: String,
    pub client_path: String,
    pub corrupt_next_reply: Arc<AtomicBool>,
    /// Plain descriptors of both slave ends (no flock, so devices may lock exclusively), so
    /// the ptys never hang up while a client closes and reopens its end.
    _keep: (std::fs::File, std::fs::File),
    tasks: Vec<JoinHandle<()>>,
}

async fn relay<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    mut r: R,
    mut w: W,
    corrupt: Option<Arc<AtomicBool>>,
) {
    let mut buf = [0u8; 512];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => {
                // A pty master reads EIO while no slave descriptor is open; the bridge holds
                // one, so this is the end.
                return;
            }
            Ok(n) => n,
        };
        if let Some(c) = &corrupt
            && c.swap(false, Ordering::SeqCst)
        {
            buf[n - 1] ^= 0xFF;
        }
        if w.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl PtyBridge {
    pub fn new() -> PtyBridge {
        let (ma, sa) = SerialStream::pair().expect("pty pair");
        let (mb, sb) = SerialStream::pair().expect("pty pair");
        let device_path = tokio_serial::SerialPort::name(&sa).unwrap();
        let client_path = tokio_serial::SerialPort::name(&sb).unwrap();
        let keep = |path: &str| {
            use std::os::unix::fs::OpenOptionsExt;
            const O_NOCTTY: i32 = 0o400;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(O_NOCTTY)
                .open(path)
                .expect("open pty slave")
        };
        let keep_a = keep(&device_path);
        let keep_b = keep(&client_path);
        // Release the pair's slave descriptors and their flocks; the plain ones hold the ptys.
        drop((sa, sb));
        let corrupt = Arc::new(AtomicBool::new(false));
        let (ra, wa) = tokio::io::split(ma);
        let (rb, wb) = tokio::io::split(mb);
        let tasks = vec![
            tokio::spawn(relay(ra, wb, Some(corrupt.clone()))),
            tokio::spawn(relay(rb, wa, None)),
        ];
        PtyBridge {
            device_path,
            client_path,
            corrupt_next_reply: corrupt,
            _keep: (keep_a, keep_b),
            tasks,
        }
    }
}

impl Drop for PtyBridge {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// A tokio-modbus RTU server on the device side of a [`PtyBridge`].
pub struct RtuSlave {
    pub bridge: PtyBridge,
    pub state: Shared,
    task: JoinHandle<()>,
}

impl RtuSlave {
    pub async fn start(state: SlaveState) -> RtuSlave {
        let bridge = PtyBridge::new();
        let state = Arc::new(Mutex::new(state));
        let svc = ImageService(state.clone());
        let path = bridge.device_path.clone();
        let task = tokio::spawn(async move {
            // The server stops on undecodable input; reopen and go on, as a device would.
            loop {
                let Ok(port) = tokio_serial::SerialPortBuilderExt::open_native_async(
                    tokio_serial::new(&path, 115_200).exclusive(false),
                ) else {
                    return;
                };
                let server = tokio_modbus::server::rtu::Server::new(port);
                let _ = server.serve_forever(svc.clone()).await;
            }
        });
        RtuSlave {
            bridge,
            state,
            task,
        }
    }

    pub fn endpoint(&self) -> String {
        self.bridge.client_path.clone()
    }
}

impl Drop for RtuSlave {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Path of a shipped profile.
pub fn profile_path(name: &str) -> String {
    format!("{}/../profiles/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub fn sim_drive() -> Arc<Profile> {
    Arc::new(Profile::load(profile_path("sim-drive.toml")).unwrap())
}

pub fn sim_sensor() -> Arc<Profile> {
    Arc::new(Profile::load(profile_path("sim-torque-sensor.toml")).unwrap())
}

/// A CiA 402-ish drive on the simulated drive's map (addresses from the profile): the control
/// word drives the status word, the mode is echoed, feedback follows the commands while
/// enabled, and the heartbeat counts writes.
pub fn drive_unit(p: &Profile) -> (Vec<u16>, Hook) {
    let a = |r: Role| usize::from(p.role(r).unwrap().address);
    let (cw, mode, status, disp, hb) = (
        a(Role::ControlWord),
        a(Role::Mode),
        a(Role::Status),
        a(Role::ModeDisplay),
        a(Role::Heartbeat),
    );
    let follow = [
        (a(Role::TorqueFeedback), a(Role::TorqueCommand)),
        (a(Role::VelocityFeedback), a(Role::VelocityCommand)),
        (a(Role::PositionFeedback), a(Role::PositionCommand)),
    ];
    let mut holding = vec![0u16; 0x2B];
    holding[status] = 0x0040;
    let hook: Hook = Box::new(move |img: &mut Image| {
        let h = &mut img.holding;
        let c = h[cw];
        let s = h[status];
        h[status] = if c & 0x80 != 0 {
            0x0040
        } else if s & 0x0008 != 0 {
            s
        } else {
            match c & 0x8F {
                0x06 => 0x0021,
                0x07 => 0x0023,
                0x0F => 0x0027,
                _ => 0x0040,
            }
        };
        h[disp] = h[mode];
        let enabled = h[status] & 0x6F == 0x27;
        for (fb, cmd) in follow {
            h[fb] = if enabled { h[cmd] } else { 0 };
            h[fb + 1] = if enabled { h[cmd + 1] } else { 0 };
        }
        h[hb] = h[hb].wrapping_add(1);
    });
    (holding, hook)
}

/// The Python interpreter with pymodbus 3.16.1 ($FRICTIONBENCH_PYTHON, else python3); panics
/// with instructions when pymodbus is missing (never skips).
pub fn python() -> String {
    let py = std::env::var("FRICTIONBENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args([
            "-c",
            "import pymodbus, sys; sys.exit(pymodbus.__version__ != '3.16.1')",
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "interop tests need pymodbus 3.16.1: run ./scripts/test.sh, or set FRICTIONBENCH_PYTHON \
         to a python with `pip install 'pymodbus[serial]==3.16.1'` (tried {py:?})"
    );
    py
}

/// The pymodbus drive server as a child process, killed on drop.
pub struct PyServer {
    pub child: tokio::process::Child,
    pub first_line: String,
}

impl PyServer {
    pub async fn start(args: &[&str]) -> PyServer {
        use tokio::io::AsyncBufReadExt;
        let script = format!(
            "{}/tests/pymodbus_drive_server.py",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut child = tokio::process::Command::new(python())
            .arg(script)
            .arg(profile_path("sim-drive.toml"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the pymodbus server");
        let out = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(out).lines();
        let first_line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("pymodbus server did not start within 30 s")
            .unwrap()
            .expect("pymodbus server exited before it was ready");
        PyServer { child, first_line }
    }
}
