//! The emulated LabJack T7 against two clients: `async_labjack` (crates.io), an independent
//! implementation of the T-series protocol (its command-response reads and writes, its Modbus
//! Feedback frames, its calibration read and its stream reader), and this project's
//! `protocols::DaqClient`. The plant runs on a virtual clock, so what the DAQ reads is fixed
//! while a test looks; the stream keeps its own scan clock in wall time.

use crate::util::{Link, TestBench};
use async_labjack::client::{LabjackClient, LabjackInteractions};
use async_labjack::helpers::calibrations::t7_ain_binary_to_volts;
use async_labjack::helpers::stream::process_stream;
use async_labjack::labjack::StreamConfigBuilder;
use async_labjack::{
    AIN0, DAC0, DIO0_EF_ENABLE, DIO0_EF_INDEX, DIO0_EF_READ_A, DIO1_EF_ENABLE, DIO1_EF_INDEX,
    PRODUCT_ID,
};
use bench_sim::daq::{DaqSim, DaqSimOptions, shipped_t7};
use bench_sim::{Action, Mode};
use protocols::daq::{AinConfig, DaqClient, StreamConfig, StreamFault};
use std::sync::Arc;
use std::time::Duration;

/// The amplifier's zero-torque output in these tests [V]: far from 0 V, so a wrong address or
/// a wrong word order cannot read it by chance.
const OFFSET_V: f64 = 1.5;
/// One count of the ±10 V range [V].
const LSB_V: f64 = 0.000316;

async fn t7() -> (TestBench, DaqSim) {
    let bench = TestBench::virtual_time(Link::Tcp).await;
    let options = DaqSimOptions {
        offset_v: OFFSET_V,
        noise_v: 0.0,
        ..DaqSimOptions::default()
    };
    let any = "127.0.0.1:0".parse().unwrap();
    let daq = DaqSim::start(
        Arc::clone(bench.sim.bench()),
        shipped_t7().unwrap(),
        options,
        any,
        any,
    )
    .await
    .unwrap();
    (bench, daq)
}

/// Turns the shaft: torque mode at 0.5 N m for 0.3 s of simulated time, with no comms
/// watchdog (nothing talks to the drive meanwhile).
fn turn(bench: &TestBench) {
    let b = bench.sim.bench();
    for a in [
        Action::SetWatchdog(0.0),
        Action::Enable,
        Action::SetMode(Mode::Torque),
        Action::Torque(0.5),
    ] {
        assert!(b.apply(a), "{a:?}");
    }
    b.advance(0.3);
}

/// This project's DAQ client, connected to the emulation.
async fn client(daq: &DaqSim) -> (Arc<protocols::DaqProfile>, DaqClient) {
    let profile = Arc::new(shipped_t7().unwrap());
    let timeout = Duration::from_secs(2);
    let c = DaqClient::connect(daq.endpoints().modbus, Arc::clone(&profile), timeout).await;
    (profile, c.unwrap())
}

fn expected_volts(bench: &TestBench) -> f64 {
    bench.sim.bench().feedback().sensor_torque_nm / DaqSimOptions::default().nm_per_v + OFFSET_V
}

#[tokio::test]
async fn async_labjack_reads_writes_and_counts_on_the_emulated_t7() {
    let (bench, daq) = t7().await;
    let mut lj = LabjackClient::connect(daq.endpoints().modbus)
        .await
        .unwrap();
    assert_eq!(PRODUCT_ID.read(&mut lj).await.unwrap(), 7.0);
    turn(&bench);
    let v = f64::from(AIN0.read(&mut lj).await.unwrap());
    assert!(
        (v - expected_volts(&bench)).abs() <= LSB_V,
        "AIN0 {v} V, amplifier {} V",
        expected_volts(&bench)
    );
    assert!((v - OFFSET_V).abs() > 0.01, "the torque must show: {v} V");
    DAC0.write(&mut lj, 2.5).await.unwrap();
    assert_eq!(DAC0.read(&mut lj).await.unwrap(), 2.5);
    assert!(DAC0.write(&mut lj, 6.0).await.is_err(), "DAC0 is 0..5 V");
    // Quadrature on DIO0/DIO1 as LabJack's how-to writes it: disable, index 10, enable.
    for tag in [DIO0_EF_ENABLE, DIO1_EF_ENABLE] {
        tag.write(&mut lj, 0).await.unwrap();
    }
    assert_eq!(
        DIO0_EF_READ_A.read(&mut lj).await.unwrap(),
        0,
        "no count before the counter is on"
    );
    for tag in [DIO0_EF_INDEX, DIO1_EF_INDEX] {
        tag.write(&mut lj, 10).await.unwrap();
    }
    for tag in [DIO0_EF_ENABLE, DIO1_EF_ENABLE] {
        tag.write(&mut lj, 1).await.unwrap();
    }
    let counts = bench.sim.bench().feedback().position_counts;
    assert!(counts > 10, "the shaft turned: {counts}");
    assert_eq!(
        i64::from(DIO0_EF_READ_A.read(&mut lj).await.unwrap() as i32),
        counts
    );
    drop(lj);
    daq.shutdown().await;
}

#[tokio::test]
async fn async_labjack_streams_the_emulated_t7_with_its_calibration() {
    let (bench, daq) = t7().await;
    turn(&bench);
    let mut lj = LabjackClient::connect(daq.endpoints().modbus)
        .await
        .unwrap();
    let cal = lj.read_t7_calibrations().await.unwrap().hs_gain_1_ain_cal;
    let socket = tokio::net::TcpStream::connect(daq.endpoints().stream)
        .await
        .unwrap();
    let config = StreamConfigBuilder::default()
        .num_addresses(2)
        .scan_rate(2000.0)
        .auto_target(1)
        .samples_per_packet(50)
        .build()
        .unwrap();
    lj.start_stream(&config, vec![AIN0.into(), DIO0_EF_READ_A.into()])
        .await
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let reader =
        tokio::spawn(async move { process_stream(socket, &tx, Duration::from_secs(5)).await });
    let want = bench.sim.bench().feedback();
    for scan in 0..1000 {
        let ain = rx.recv().await.expect("stream sample");
        let count = rx.recv().await.expect("stream sample");
        let v = f64::from(t7_ain_binary_to_volts(ain.into(), &cal));
        assert!(
            (v - expected_volts(&bench)).abs() <= LSB_V,
            "scan {scan}: {v} V"
        );
        // The counter is off: its stream value is 0.
        assert_eq!(count, 0, "scan {scan}");
    }
    lj.stop_stream().await.unwrap();
    reader.abort();
    assert_eq!(
        want,
        bench.sim.bench().feedback(),
        "the plant held still on its virtual clock"
    );
    assert!(daq.stream_stats().scans >= 1000);
    daq.shutdown().await;
}

#[tokio::test]
async fn the_daq_client_configures_reads_and_streams_every_scan() {
    let (bench, daq) = t7().await;
    turn(&bench);
    let (profile, mut c) = client(&daq).await;
    let ain = AinConfig {
        range_v: 10.0,
        negative_ch: None,
        resolution_index: 0,
        settling_us: 0.0,
    };
    c.configure_ain(0, &ain).await.unwrap();
    let bad = AinConfig {
        range_v: 5.0,
        ..ain
    };
    let e = c.configure_ain(0, &bad).await.unwrap_err().to_string();
    assert!(e.contains("ain.range_v"), "{e}");
    assert!((c.read_ain(0).await.unwrap() - expected_volts(&bench)).abs() <= LSB_V);
    c.configure_quadrature().await.unwrap();
    let counts = bench.sim.bench().feedback().position_counts;
    assert_eq!(i64::from(c.read_counter().await.unwrap()), counts);
    c.write_dac(0, 1.25).await.unwrap();
    assert_eq!(c.read_dac(0).await.unwrap(), 1.25);
    assert!(c.write_dac(0, -1.0).await.unwrap_err().is_limit());
    let cal = c.read_calibration().await.unwrap();
    let config = StreamConfig {
        scan_rate_hz: 4000.0,
        scan_list: vec![
            profile.address("AIN#", 0).unwrap(),
            profile.address("DIO#_EF_READ_A", 0).unwrap(),
        ],
        samples_per_packet: 64,
        resolution_index: 0,
        settling_us: 0.0,
        buffer_bytes: 0,
    };
    let mut s = c
        .start_stream(&config, daq.endpoints().stream)
        .await
        .unwrap();
    // The emulation's stream thread runs at normal priority, beside the test command's
    // real-time benches, which can hold it off for over the 100 ms stall limit: this test is
    // about the scans, so it waits longer, and stalls have their own check below.
    let stall = s.stall_limit();
    s.set_stall_limit(Duration::from_secs(5));
    let mut next_t = 0.0;
    let mut samples = Vec::new();
    while s.tracker().scans < 2000 {
        let batch = s.next().await.unwrap();
        assert!(
            (batch.t0_s - next_t).abs() < 1e-9,
            "scan clock {} after {next_t}",
            batch.t0_s
        );
        samples.extend(batch.packet.samples);
        next_t = (s.tracker().scans + s.tracker().skipped_scans) as f64 / 4000.0;
    }
    assert_eq!(s.tracker().skipped_scans, 0);
    for scan in samples.chunks_exact(2) {
        assert!((cal.volts(scan[0]) - expected_volts(&bench)).abs() <= LSB_V);
        assert_eq!(i64::from(scan[1]), counts & 0xFFFF, "counter's low word");
    }
    s.set_stall_limit(stall);
    c.stop_stream().await.unwrap();
    // Stopped: no packet comes, and the reader calls it a stall.
    let fault = loop {
        match s.next().await {
            Ok(_) => continue,
            Err(f) => break f,
        }
    };
    assert!(matches!(fault, StreamFault::Stalled { .. }), "{fault}");
    daq.shutdown().await;
}

#[tokio::test]
async fn a_stream_the_device_cannot_run_is_refused_before_it_starts() {
    let (_bench, daq) = t7().await;
    let (_, mut c) = client(&daq).await;
    let config = StreamConfig {
        scan_rate_hz: 60_000.0,
        scan_list: vec![0, 2],
        samples_per_packet: 64,
        resolution_index: 0,
        settling_us: 0.0,
        buffer_bytes: 0,
    };
    let e = c
        .start_stream(&config, daq.endpoints().stream)
        .await
        .unwrap_err();
    assert!(
        e.is_limit() && e.to_string().contains("stream.scan_rate_hz"),
        "{e}"
    );
    daq.shutdown().await;
}

/// Nobody reads the stream: the device buffer (4096 bytes, 2048 one-address scans) fills and
/// the T7 goes into auto-recovery, discarding scans. Once a reader connects the buffer drains,
/// packets carry "auto-recover active" (2940) and then "auto-recover end" (2941) with the
/// number of scans skipped, which the tracker adds to its scan clock.
#[tokio::test]
async fn an_unread_stream_recovers_and_reports_the_scans_it_skipped() {
    let (_bench, daq) = t7().await;
    let mut lj = LabjackClient::connect(daq.endpoints().modbus)
        .await
        .unwrap();
    let config = StreamConfigBuilder::default()
        .num_addresses(1)
        .scan_rate(4000.0)
        .auto_target(1)
        .samples_per_packet(64)
        .build()
        .unwrap();
    lj.start_stream(&config, vec![AIN0.into()]).await.unwrap();
    while daq.stream_stats().skipped == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut socket = tokio::net::TcpStream::connect(daq.endpoints().stream)
        .await
        .unwrap();
    let codes = shipped_t7().unwrap().stream.status;
    let mut tracker = protocols::daq::StreamTracker::default();
    let mut statuses = Vec::new();
    while tracker.recoveries == 0 {
        use tokio::io::AsyncReadExt;
        let mut header = [0u8; protocols::daq::HEADER_BYTES];
        socket.read_exact(&mut header).await.unwrap();
        let mut data = vec![0u8; 2 * protocols::daq::StreamPacket::sample_count(&header).unwrap()];
        socket.read_exact(&mut data).await.unwrap();
        let packet = protocols::daq::StreamPacket::decode(&header, &data).unwrap();
        statuses.push(packet.status);
        assert!(
            statuses.len() < 10_000,
            "no auto-recover end in 10 000 packets"
        );
        tracker.account(&packet, 1, &codes, u32::MAX).unwrap();
    }
    assert!(
        statuses.contains(&codes.auto_recover_active),
        "{statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&codes.auto_recover_end));
    assert!(tracker.skipped_scans > 0);
    assert!(tracker.skipped_scans <= daq.stream_stats().skipped);
    lj.stop_stream().await.unwrap();
    daq.shutdown().await;
}

/// The emulated T7 on a drive in analog mode: DAC0 its torque input, (volts − 2.5 V) ×
/// 0.4 N m/V, and `enable_dio` (if any) its enable line.
pub(crate) async fn analog_daq(bench: &TestBench, enable_dio: Option<u16>) -> DaqSim {
    let command = bench_sim::daq::AnalogCommand::torque(2.5, 0.4, enable_dio);
    daq_wired(bench, command).await.unwrap()
}

/// The emulated T7 in front of `bench` with DAC0 wired to its drive as `command` says.
async fn daq_wired(
    bench: &TestBench,
    command: bench_sim::daq::AnalogCommand,
) -> std::io::Result<DaqSim> {
    let options = DaqSimOptions {
        analog_command: Some(command),
        ..DaqSimOptions::default()
    };
    let any = "127.0.0.1:0".parse().unwrap();
    let b = Arc::clone(bench.sim.bench());
    DaqSim::start(b, shipped_t7().unwrap(), options, any, any).await
}

/// With the drive enabled in `mode`, `volts` on DAC0 make its setpoint `expected`, and the
/// centre, 2.5 V, makes it 0.
async fn dac0_sets_the_drive(
    daq: DaqSim,
    bench: &TestBench,
    mode: Mode,
    volts: f64,
    expected: f64,
) {
    let plant = bench.sim.bench();
    for a in [Action::Enable, Action::SetMode(mode)] {
        assert!(plant.apply(a));
    }
    let (_, mut c) = client(&daq).await;
    c.write_dac(0, volts).await.unwrap();
    let setpoint = plant.feedback().setpoint;
    assert!((setpoint - expected).abs() < 1e-5, "{setpoint}");
    c.write_dac(0, 2.5).await.unwrap();
    assert_eq!(plant.feedback().setpoint, 0.0);
    daq.shutdown().await;
}

/// A drive in analog mode: DAC0 is its torque input, (volts − 2.5 V) × 0.4 N m/V.
#[tokio::test]
async fn dac0_commands_the_drive_torque_in_analog_mode() {
    let bench = TestBench::virtual_time(Link::Tcp).await;
    let daq = analog_daq(&bench, None).await;
    dac0_sets_the_drive(daq, &bench, Mode::Torque, 3.0, 0.2).await;
}

/// A drive in analog velocity mode: DAC0 is its speed setpoint, (volts − 2.5 V) × 10 rad/s
/// per V, which its own speed loop follows; its Modbus speed setpoint stays unwritten.
#[tokio::test]
async fn dac0_commands_the_drive_speed_in_analog_velocity_mode() {
    let bench = TestBench::virtual_time(Link::Tcp).await;
    let command = bench_sim::daq::AnalogCommand::velocity(2.5, 10.0, None);
    let daq = daq_wired(&bench, command).await.unwrap();
    dac0_sets_the_drive(daq, &bench, Mode::Velocity, 2.6, 1.0).await;
}

/// A wiring without the scale of its mode is refused naming the key.
#[tokio::test]
async fn an_analog_command_without_its_scale_is_refused() {
    let bench = TestBench::virtual_time(Link::Tcp).await;
    let mut a = bench_sim::daq::AnalogCommand::velocity(2.5, 10.0, None);
    a.rad_s_per_v = None;
    let e = daq_wired(&bench, a).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("analog_command.rad_s_per_v: required with mode = \"velocity\""),
        "{e}"
    );
}
