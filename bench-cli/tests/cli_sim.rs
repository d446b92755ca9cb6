//! `bench sim` and `bench perf modbus`.

use crate::util::{bench, stderr, stdout, t7_client};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// `bench sim --tcp 127.0.0.1:0` plus `args`, its standard streams piped; the endpoints it
/// prints first.
pub(crate) fn start_sim(args: &[&str]) -> (std::process::Child, serde_json::Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["sim", "--tcp", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bench sim");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let endpoints = serde_json::from_str(&line).expect("one JSON line");
    (child, endpoints)
}

#[test]
fn sim_prints_its_endpoints_serves_and_stops_on_ctrl_c() {
    let (mut child, ep) = start_sim(&["--rtu", "--baud", "921600", "--seed", "3"]);
    assert_eq!(ep["baud"], 921600);
    assert_eq!(ep["drive_unit"], 1);
    assert_eq!(ep["sensor_unit"], 2);
    let pty = ep["rtu"].as_str().expect("pty path");
    assert!(std::path::Path::new(pty).exists(), "{pty}");
    let addr = ep["tcp"].as_str().expect("tcp address");
    std::net::TcpStream::connect(addr).expect("tcp endpoint accepts");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status:?}");
}

/// `bench sim --daq t7` serves a LabJack T7 in front of the bench: the DAQ client finds a T7
/// (PRODUCT_ID 7) and reads the torque amplifier's offset on AIN0; the drive bus still answers.
#[test]
fn sim_serves_a_t7_daq_beside_the_drive_bus() {
    let (mut child, ep) = start_sim(&[
        "--daq",
        "t7",
        "--daq-options",
        r#"{"offset_v": 2.0, "noise_v": 0}"#,
    ]);
    assert_eq!(ep["daq"]["kind"], "t7");
    std::net::TcpStream::connect(ep["daq"]["stream"].as_str().unwrap())
        .expect("stream port accepts");
    std::net::TcpStream::connect(ep["tcp"].as_str().unwrap()).expect("drive bus accepts");
    let (rt, mut t7) = t7_client(&ep);
    let volts = rt.block_on(t7.read_ain(0)).unwrap();
    // At rest the sensor reads its noise (σ 2 mN m = 4 mV at 0.5 N m/V): 2 V within 10 σ.
    assert!((volts - 2.0).abs() < 0.04, "AIN0 {volts} V");
    let e = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["sim", "--daq", "t7", "--daq-options", r#"{"offset": 2.0}"#])
        .output()
        .unwrap();
    assert!(!e.status.success());
    assert!(
        stderr(&e).contains("--daq-options") && stderr(&e).contains("offset"),
        "{}",
        stderr(&e)
    );
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn sim_rejects_a_bad_truth_naming_the_parameter() {
    let o = bench(&[
        "sim",
        "--truth",
        "lugre",
        "--truth-params",
        r#"{"fs": 0.1}"#,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fs (0.1) must be >= fc"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn perf_modbus_reports_every_key_over_tcp_and_rtu() {
    let o = bench(&["perf", "modbus", "--tcp", "--seconds", "0.3", "--peer"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["transport"], "tcp");
    assert!(r["baud"].is_null() && r["line_limit_cycles_per_s"].is_null());
    assert!(r["ratio_to_limit"].is_null());
    assert!(r["cycles_per_s"].as_f64().unwrap() > 0.0, "{r}");
    // The bare tokio-modbus peer ran too, on the same server (issue 29).
    let (rate, peer) = (
        r["cycles_per_s"].as_f64().unwrap(),
        r["peer_cycles_per_s"].as_f64().unwrap(),
    );
    assert!(
        (r["ratio_to_peer"].as_f64().unwrap() - rate / peer).abs() < 1e-9,
        "{r}"
    );
    assert_eq!(r["errors"], 0);

    let o = bench(&[
        "perf",
        "modbus",
        "--rtu",
        "--baud",
        "921600",
        "--seconds",
        "0.3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["transport"], "rtu");
    assert_eq!(r["baud"], 921600);
    let limit = r["line_limit_cycles_per_s"].as_f64().unwrap();
    let ratio = r["ratio_to_limit"].as_f64().unwrap();
    // Never faster than the line allows (the figure itself is a benchmark, not asserted).
    assert!(limit > 0.0 && ratio > 0.0 && ratio <= 1.02, "{r}");
}

#[test]
fn sim_switches_faults_from_stdin() {
    use std::io::{Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["sim", "--tcp", "127.0.0.1:0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run bench sim");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let ep: serde_json::Value = serde_json::from_str(&line).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"exception": 4}}"#).unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.contains(r#""exception":4"#), "{line}");
    // A raw Modbus TCP read of the statusword (address from the shipped profile).
    let drive = bench_sim::shipped(false).unwrap();
    let a = drive
        .role(protocols::Role::Status)
        .unwrap()
        .address
        .to_be_bytes();
    let mut s = std::net::TcpStream::connect(ep["tcp"].as_str().unwrap()).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    s.write_all(&[0, 1, 0, 0, 0, 6, 1, 3, a[0], a[1], 0, 1])
        .unwrap();
    let mut rsp = [0u8; 9];
    s.read_exact(&mut rsp).unwrap();
    assert_eq!(&rsp[7..], &[0x83, 0x04], "exception reply {rsp:02X?}");
    drop(stdin);
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// `(thread name, scheduling policy, real-time priority)` of each thread of process `pid`,
/// from `/proc/PID/task/*/stat` (fields 40 and 41; policy 1 is SCHED_FIFO).
fn thread_policies(pid: u32) -> Vec<(String, u32, u32)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc/PID/task");
    tasks
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.ok()?.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(") ")?;
            let name = head.split_once(" (")?.1.to_string();
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // `rest` starts at field 3.
            Some((name, fields[38].parse().ok()?, fields[37].parse().ok()?))
        })
        .collect()
}

/// The threads of `pid` once one is named `name`: a new thread takes its name from inside
/// itself, so for a moment after the endpoints are printed it may still bear its parent's.
fn named_threads(pid: u32, name: &str) -> Vec<(String, u32, u32)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let threads = thread_policies(pid);
        if threads.iter().any(|t| t.0 == name) || std::time::Instant::now() > deadline {
            return threads;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `bench sim` stands in for hardware: its physics thread and its Modbus runtime run under
/// SCHED_FIFO at `--realtime-priority`, so a busy PC cannot make an emulated drive miss a
/// reply; `--realtime-priority 0` leaves every thread at normal scheduling. Where SCHED_FIFO
/// is not permitted, the simulator says so on start and the first half is not checked.
#[test]
fn sim_runs_its_threads_at_the_real_time_priority_it_is_given() {
    for priority in ["30", "0"] {
        let (mut child, _) = start_sim(&["--realtime-priority", priority]);
        let threads = named_threads(child.id(), "bench-sim-physi");
        child.kill().unwrap();
        let o = child.wait_with_output().unwrap();
        let refused = stderr(&o).contains("SCHED_FIFO 30 refused");
        let physics = threads
            .iter()
            .find(|(name, ..)| name == "bench-sim-physi")
            .unwrap_or_else(|| panic!("no physics thread in {threads:?}"));
        if priority == "0" {
            assert!(threads.iter().all(|t| t.1 == 0), "{threads:?}");
        } else if refused {
            eprintln!("SCHED_FIFO not permitted here: {}", stderr(&o));
        } else {
            assert_eq!((physics.1, physics.2), (1, 30), "{threads:?}");
            // The physics thread's and at least one Modbus worker's (the one that started it).
            let fifo = threads.iter().filter(|t| t.1 == 1 && t.2 == 30).count();
            assert!(fifo >= 2, "the runtime's workers too: {threads:?}");
        }
    }
}
