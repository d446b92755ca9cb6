//! `bench probe`: read every readable signal of a device through its profile and print one
//! JSON object per line, in SI units.
//!
//! ```text
//! bench probe --profile profiles/sim-drive.toml --tcp 127.0.0.1:5020
//! bench probe --profile profiles/delta-asda-a2.toml --serial /dev/ttyUSB0 --baud 115200 --watch 10
//! bench probe --check --profile profiles/delta-asda-a2.toml --serial /dev/ttyUSB0 --baud 115200
//! ```
//!
//! `--check` prints a first-connection checklist instead ([`super::probe_check`]).
//!
//! Each line: `{"t_s", "device", "unit", "signals": {name: {"value", "unit", "raw", "role"?}},
//! "status": {pattern: bool}, "errors": [{"registers", "error", "kind"}], "link": {counters}}`. A read
//! block that fails is listed under `errors` and its signals are left out; the other blocks
//! are still read.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use protocols::{DeviceIo, Link, LinkConfig, Profile, RegisterRef, Role};
use serde_json::{Map, json};

/// Arguments of `bench probe`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Device profile (TOML), e.g. profiles/sim-drive.toml.
    #[arg(long)]
    pub profile: PathBuf,
    /// Modbus TCP address, host:port.
    #[arg(long, conflicts_with = "serial", required_unless_present = "serial")]
    pub tcp: Option<String>,
    /// Serial device for Modbus RTU (/dev/ttyUSB0, a pty path).
    #[arg(long, requires = "baud")]
    pub serial: Option<PathBuf>,
    /// Baud rate for --serial.
    #[arg(long)]
    pub baud: Option<u32>,
    /// Unit (slave) id; default: the profile's.
    #[arg(long)]
    pub unit: Option<u8>,
    /// Keep reading at this rate (Hz) until Ctrl-C.
    #[arg(long)]
    pub watch: Option<f64>,
    /// With --watch, stop after this many lines.
    #[arg(long)]
    pub count: Option<u64>,
    /// Check the profile against the device instead (one reading, nothing written): print a
    /// pass/warn/fail checklist with what to fix; exit 1 when an item fails.
    #[arg(long, conflicts_with_all = ["watch", "count"])]
    pub check: bool,
}

/// Runs `bench probe`, printing to standard output.
pub async fn run(args: ProbeArgs) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    run_to(args, &mut stdout.lock()).await
}

/// Runs `bench probe`, printing to `out`.
pub async fn run_to(args: ProbeArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let profile = Arc::new(Profile::load(&args.profile)?);
    let cfg = match (&args.tcp, &args.serial) {
        (Some(addr), None) => LinkConfig::tcp(addr.clone(), &profile),
        (None, Some(path)) => LinkConfig::serial(path.clone(), args.baud, &profile),
        _ => bail!("give exactly one of --tcp ADDR or --serial PATH --baud B"),
    };
    let period = match args.watch {
        None => None,
        Some(hz) if hz.is_finite() && hz > 0.0 && hz <= 10_000.0 => {
            Some(Duration::from_secs_f64(1.0 / hz))
        }
        Some(hz) => bail!("--watch {hz} must be a rate in (0, 10000] Hz"),
    };
    if let Some(path) = &args.serial
        && let Some(ms) = protocols::usb_latency_timer_ms(path)
        && ms > 1
    {
        eprintln!(
            "bench probe: warning: the USB adapter's latency timer is {ms} ms; set it to 1 \
             (/sys/bus/usb-serial/devices/<tty>/latency_timer) or RTU will be slow"
        );
    }
    let endpoint = cfg.endpoint.to_string();
    let link = Link::open(cfg).await?.shared();
    let mut io = DeviceIo::new(profile.clone(), link.clone());
    if let Some(u) = args.unit {
        io = io.with_unit(u);
    }
    let blocks = profile.readable_plan();
    let t0 = tokio::time::Instant::now();
    let mut ticker = period.map(|p| {
        let mut t = tokio::time::interval(p);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        t
    });
    let mut lines = 0u64;
    loop {
        if let Some(t) = &mut ticker {
            tokio::select! {
                _ = t.tick() => {}
                _ = tokio::signal::ctrl_c() => return Ok(()),
            }
        }
        let t_s = t0.elapsed().as_secs_f64();
        let mut signals = Map::new();
        let mut status = Map::new();
        let mut errors = Vec::new();
        let mut raws = Vec::new();
        for b in &blocks {
            let values = match io.read_block(b).await {
                Ok(data) => io.decode_blocks(std::slice::from_ref(b), &[data]),
                Err(e) => Err(e),
            };
            match values {
                Ok(values) => {
                    for v in values {
                        raws.push((v.name.clone(), v.raw));
                        let raw = match v.raw {
                            protocols::profile::RawValue::Float(x) => json!(x),
                            r => json!(r.as_bits()),
                        };
                        let mut entry = json!({"value": v.value, "unit": v.unit, "raw": raw});
                        if let Some(role) = v.role {
                            entry["role"] = json!(role.name());
                            if role == Role::Status
                                && let Some(bits) = v.raw.as_bits()
                            {
                                for p in &profile.status {
                                    status.insert(p.name.clone(), json!(p.matches(bits)));
                                }
                            }
                        }
                        signals.insert(v.name, entry);
                    }
                }
                Err(e) => {
                    let reg = RegisterRef {
                        table: b.table,
                        address: b.start,
                        count: b.count,
                        signal: None,
                    };
                    errors.push(json!({"registers": reg.to_string(), "error": e.to_string(), "kind": e.kind().name()}));
                }
            }
        }
        if args.check {
            let reading = super::probe_check::Reading {
                endpoint: &endpoint,
                signals: &signals,
                raw: &raws,
                status: &status,
                errors: &errors,
            };
            let (text, fails) =
                super::probe_check::render(&super::probe_check::checklist(&profile, &reading));
            write!(out, "{text}")?;
            out.flush()?;
            if fails > 0 {
                bail!("{fails} check(s) of '{}' failed", profile.device.name);
            }
            return Ok(());
        }
        let stats = link.lock().await.stats();
        let line = json!({
            "t_s": t_s,
            "device": profile.device.name,
            "unit": io.unit(),
            "signals": signals,
            "status": status,
            "errors": errors,
            "link": stats,
        });
        writeln!(out, "{line}")?;
        out.flush()?;
        lines += 1;
        if ticker.is_none() {
            if !errors.is_empty() && signals.is_empty() {
                bail!(
                    "no signal of '{}' could be read at {endpoint}",
                    profile.device.name
                );
            }
            return Ok(());
        }
        if args.count.is_some_and(|n| lines >= n) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::future::Ready;
    use std::sync::Mutex;
    use tokio_modbus::{ExceptionCode, Request, Response, SlaveRequest};

    /// A real tokio-modbus TCP slave over a register image (unit 1).
    #[derive(Clone)]
    struct Image(Arc<Mutex<Vec<u16>>>);

    impl tokio_modbus::server::Service for Image {
        type Request = SlaveRequest<'static>;
        type Response = Option<Response>;
        type Exception = ExceptionCode;
        type Future = Ready<Result<Option<Response>, ExceptionCode>>;
        fn call(&self, req: Self::Request) -> Self::Future {
            let regs = self.0.lock().unwrap();
            std::future::ready(match req.request {
                _ if req.slave != 1 => Ok(None),
                Request::ReadHoldingRegisters(a, n) => {
                    let (a, n) = (usize::from(a), usize::from(n));
                    if a + n <= regs.len() {
                        Ok(Some(Response::ReadHoldingRegisters(
                            regs[a..a + n].to_vec(),
                        )))
                    } else {
                        Err(ExceptionCode::IllegalDataAddress)
                    }
                }
                _ => Err(ExceptionCode::IllegalFunction),
            })
        }
    }

    fn profile_path(name: &str) -> PathBuf {
        PathBuf::from(format!("{}/../profiles/{name}", env!("CARGO_MANIFEST_DIR")))
    }

    #[tokio::test]
    async fn probe_prints_every_readable_signal_in_si_units() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut regs = vec![0u16; 0x2B];
        regs[0x20] = 0x0027; // operation enabled
        regs[0x21] = 10; // torque mode
        regs[0x24] = 0x0000; // position -1 rev = -131072 counts, low word first
        regs[0x25] = 0xFFFE;
        regs[0x28] = 5000; // torque 0.5 N m
        regs[0x2A] = 375; // drive temperature 37.5 °C
        let image = Image(Arc::new(Mutex::new(regs)));
        let server = tokio_modbus::server::tcp::Server::new(listener);
        let svc = image.clone();
        let task = tokio::spawn(async move {
            let on_connected = move |stream, _addr| {
                let svc = svc.clone();
                async move { Ok(Some((svc, stream))) }
            };
            let _ = server.serve(&on_connected, |_| {}).await;
        });
        let args = ProbeArgs {
            profile: profile_path("sim-drive.toml"),
            tcp: Some(addr.to_string()),
            serial: None,
            baud: None,
            unit: None,
            watch: Some(200.0),
            count: Some(2),
            check: false,
        };
        let mut out = Vec::new();
        run_to(args, &mut out).await.unwrap();
        task.abort();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        let l = &lines[1];
        assert_eq!(l["device"], "frictionbench simulated drive");
        let s = &l["signals"];
        assert_eq!(s["position_fb"]["unit"], "rad");
        let pos = s["position_fb"]["value"].as_f64().unwrap();
        assert!((pos + 2.0 * std::f64::consts::PI).abs() < 1e-12, "{pos}");
        assert_eq!(s["torque_fb"]["value"].as_f64().unwrap(), 0.5);
        assert_eq!(s["torque_fb"]["role"], "torque_feedback");
        assert_eq!(s["statusword"]["raw"], 0x27);
        assert_eq!(s["temperature"]["value"].as_f64().unwrap(), 37.5);
        assert_eq!(l["status"]["enabled"], true);
        assert_eq!(l["status"]["fault"], false);
        // Every readable signal of the profile is there.
        let p = Profile::load(profile_path("sim-drive.toml")).unwrap();
        for sig in p.signals.iter().filter(|s| s.access.readable()) {
            assert!(s.get(&sig.name).is_some(), "{} missing: {text}", sig.name);
        }
        assert_eq!(l["errors"].as_array().unwrap().len(), 0);
        assert_eq!(l["link"]["timeouts"], 0);
    }

    #[tokio::test]
    async fn probe_reports_unreadable_blocks_and_fails_when_nothing_answers() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let image = Image(Arc::new(Mutex::new(vec![0u16; 4])));
        let server = tokio_modbus::server::tcp::Server::new(listener);
        let task = tokio::spawn(async move {
            let on_connected = move |stream, _addr| {
                let svc = image.clone();
                async move { Ok(Some((svc, stream))) }
            };
            let _ = server.serve(&on_connected, |_| {}).await;
        });
        let args = ProbeArgs {
            profile: profile_path("sim-torque-sensor.toml"),
            tcp: Some(addr.to_string()),
            serial: None,
            baud: None,
            unit: Some(1),
            watch: None,
            count: None,
            check: false,
        };
        let mut out = Vec::new();
        let err = run_to(args, &mut out).await.unwrap_err();
        task.abort();
        // 0x0000..0x0005 exceeds the 4-register image: an exception, named in the line.
        let line: Value = serde_json::from_str(String::from_utf8(out).unwrap().trim()).unwrap();
        let e = &line["errors"][0];
        assert_eq!(e["registers"], "holding register 0x0000..0x0005");
        assert!(
            e["error"]
                .as_str()
                .unwrap()
                .contains("illegal data address"),
            "{e}"
        );
        assert!(err.to_string().contains("no signal"), "{err}");
    }
}
