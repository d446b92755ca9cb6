//! `Drive` and `TorqueSensor` on the simulated devices' maps, over TCP and RTU.

use std::sync::Arc;
use std::time::Duration;

use protocols::{Drive, Error, Link, Mode, TorqueSensor};

use crate::util::{SlaveState, drive_unit, sim_drive, sim_sensor};
use crate::{Bench, Kind, bench_test};

async fn bench(kind: Kind) -> (Bench, protocols::SharedLink) {
    let drive = sim_drive();
    let sensor = sim_sensor();
    let (holding, hook) = drive_unit(&drive);
    let mut sensor_regs = vec![0u16; 0x11];
    let t = sensor.signal("torque").unwrap();
    sensor_regs[0..2].copy_from_slice(&t.encode(-1.5889).unwrap());
    sensor_regs[2] = 0x0001;
    sensor_regs[4..6].copy_from_slice(
        &sensor
            .signal("torque_f32")
            .unwrap()
            .encode(-1.5889)
            .unwrap(),
    );
    let state = SlaveState::default()
        .with_unit(1, holding, Some(hook))
        .with_unit(2, sensor_regs, None);
    let bench = Bench::start(kind, state).await;
    let mut cfg = bench.config(&drive);
    cfg.timeout = Duration::from_millis(1000);
    let link = Link::open(cfg).await.unwrap().shared();
    (bench, link)
}

async fn drive_enables_commands_every_mode_and_reads_feedback(kind: Kind) {
    let (_bench, link) = bench(kind).await;
    let mut d = Drive::new(sim_drive(), link.clone()).unwrap();
    let fb = d.read_feedback().await.unwrap();
    assert_eq!((fb.enabled, fb.fault), (Some(false), Some(false)));

    d.enable().await.unwrap();
    let fb = d.read_feedback().await.unwrap();
    assert_eq!(fb.enabled, Some(true));
    assert_eq!(fb.status, Some(0x0027));

    for (mode, value) in [
        (Mode::Torque, 0.25),
        (Mode::Velocity, -12.5),
        (Mode::Position, 3.0),
    ] {
        d.set_mode(mode).await.unwrap();
        d.command(value).await.unwrap();
        let fb = d.read_feedback().await.unwrap();
        assert_eq!(fb.mode, Some(mode));
        let got = match mode {
            Mode::Torque => fb.torque_nm,
            Mode::Velocity => fb.velocity_rad_s,
            Mode::Position => fb.position_rad,
        }
        .unwrap();
        let resolution = d.profile().role(mode.command_role()).unwrap().scale
            * d.profile().role(mode.command_role()).unwrap().unit.factor;
        assert!(
            (got - value).abs() <= resolution,
            "{mode}: sent {value}, read {got}"
        );
    }
    // FC23: command and feedback in one transaction.
    d.set_mode(Mode::Torque).await.unwrap();
    let before = link.lock().await.stats().requests;
    let fb = d.command_and_read(-0.5).await.unwrap();
    assert_eq!(link.lock().await.stats().requests, before + 1);
    assert!((fb.torque_nm.unwrap() + 0.5).abs() < 1e-9, "{fb:?}");

    // A command beyond the profile's limit is refused before anything is sent.
    let before = link.lock().await.stats().requests;
    let err = d.command(6.0).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "torque_cmd = 6 N m is out of range: max 5 N m"
    );
    assert!(matches!(err, Error::OutOfRange { .. }));
    assert_eq!(link.lock().await.stats().requests, before);

    d.disable().await.unwrap();
    let fb = d.read_feedback().await.unwrap();
    assert_eq!(fb.enabled, Some(false));
    assert_eq!(fb.torque_nm, Some(0.0));
}
bench_test!(drive_enables_commands_every_mode_and_reads_feedback);

async fn drive_fault_is_reported_and_cleared(kind: Kind) {
    let (bench, link) = bench(kind).await;
    let mut d = Drive::new(sim_drive(), link).unwrap();
    d.enable().await.unwrap();
    {
        // The drive trips: fault bit and code, as after a watchdog expiry.
        let mut st = bench.state.lock().unwrap();
        let img = &mut st.units.get_mut(&1).unwrap().image;
        img.holding[0x20] = 0x0008;
        img.holding[0x22] = 0x8130;
    }
    let fb = d.read_feedback().await.unwrap();
    assert_eq!(
        (fb.fault, fb.enabled, fb.fault_code),
        (Some(true), Some(false), Some(0x8130))
    );
    // Disabling a faulted drive succeeds: its torque is off, whatever state it is in.
    d.disable().await.unwrap();
    // Enabling a faulted drive fails with the state it is stuck in.
    let err = d.enable().await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("sequence 'enable' step 1: statusword & 0x006F = 0x0008, expected 0x0021"),
        "{err}"
    );
    d.clear_fault().await.unwrap();
    let fb = d.read_feedback().await.unwrap();
    assert_eq!(fb.fault, Some(false));
    d.enable().await.unwrap();
    assert_eq!(d.read_feedback().await.unwrap().enabled, Some(true));
}
bench_test!(drive_fault_is_reported_and_cleared);

async fn sensor_reads_torque_and_status(kind: Kind) {
    let (_bench, link) = bench(kind).await;
    let mut s = TorqueSensor::new(sim_sensor(), link.clone()).unwrap();
    let r = s.read().await.unwrap();
    assert!((r.torque_nm + 1.5889).abs() < 1e-12, "{r:?}");
    assert_eq!((r.valid, r.fault), (Some(true), Some(false)));
    assert!((s.read_torque().await.unwrap() + 1.5889).abs() < 1e-12);
    // Drive and sensor share one link (one RS-485 bus).
    let mut d = Drive::new(sim_drive(), link).unwrap();
    d.read_feedback().await.unwrap();
    let f32_value = s.io().read_signal("torque_f32").await.unwrap().value;
    assert!((f32_value + 1.5889).abs() < 1e-6);
}
bench_test!(sensor_reads_torque_and_status);

#[tokio::test]
async fn clients_refuse_the_wrong_kind_of_profile() {
    let (_bench, link) = bench(Kind::Tcp).await;
    let err = Drive::new(sim_sensor(), link.clone()).unwrap_err();
    assert!(err.to_string().contains("it is not a drive"), "{err}");
    let err = TorqueSensor::new(Arc::clone(&sim_drive()), link).unwrap_err();
    assert!(
        err.to_string().contains("it is not a torque sensor"),
        "{err}"
    );
}

/// Throughput of the control loop's cycle (command write + feedback read) on loopback, with
/// FC23 (one transaction) and without (two). Prints the figures; the bound is loose so a busy
/// CI machine does not fail it.
async fn cycle_rate(kind: Kind) {
    let (_bench, link) = bench(kind).await;
    let mut d = Drive::new(sim_drive(), link.clone()).unwrap();
    d.enable().await.unwrap();
    d.set_mode(Mode::Torque).await.unwrap();
    let n = if kind == Kind::Tcp { 2000 } else { 300 };
    let t0 = std::time::Instant::now();
    for i in 0..n {
        d.command_and_read(f64::from(i % 100) * 1e-3).await.unwrap();
    }
    let fc23 = f64::from(n) / t0.elapsed().as_secs_f64();
    let t0 = std::time::Instant::now();
    for i in 0..n {
        d.command(f64::from(i % 100) * 1e-3).await.unwrap();
        d.read_feedback().await.unwrap();
    }
    let two = f64::from(n) / t0.elapsed().as_secs_f64();
    println!("{kind:?}: {fc23:.0} FC23 cycles/s, {two:.0} write+read cycles/s (no wire timing)");
    assert!(fc23 > 20.0 && two > 10.0, "{fc23} {two}");
}
bench_test!(cycle_rate);

/// RTU at 115200 and 921600 baud with the wire timing emulated by the slave: the FC23 cycle
/// rate of `Drive::command_and_read` against the computed line limit
/// ((17 + 25) characters × 11 bits / baud + 2 × t3.5, zero turnaround). The pty bridge of the
/// tests adds about 0.5 ms per transaction that a real line does not have; the bound is loose.
#[tokio::test]
async fn rtu_cycle_rate_against_the_line_limit() {
    for baud in [115_200u32, 921_600] {
        let (bench, link) = bench(Kind::Rtu).await;
        bench.state.lock().unwrap().wire_baud = Some(baud);
        let mut d = Drive::new(sim_drive(), link.clone()).unwrap();
        d.enable().await.unwrap();
        d.set_mode(Mode::Torque).await.unwrap();
        let n = 100;
        let t0 = std::time::Instant::now();
        for i in 0..n {
            d.command_and_read(f64::from(i % 10) * 1e-2).await.unwrap();
        }
        let rate = f64::from(n) / t0.elapsed().as_secs_f64();
        let limit = 1.0 / ((17.0 + 25.0) * 11.0 / f64::from(baud) + 2.0 * 1.75e-3);
        println!(
            "RTU {baud} baud: {rate:.1} FC23 cycles/s, line limit {limit:.1}/s, ratio {:.3}",
            rate / limit
        );
        assert!(
            rate <= limit * 1.02,
            "faster than the wire: {rate} > {limit}"
        );
        assert!(rate >= limit * 0.5, "{rate} vs {limit}");
    }
}
