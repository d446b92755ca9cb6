//! Fault injection, switched at run time, seen from a client.

use crate::bench_test;
use crate::util::*;
use bench_sim::FaultSet;
use protocols::Role;
use std::time::{Duration, Instant};
use tokio_modbus::ExceptionCode;
use tokio_modbus::prelude::*;

const SHORT: Duration = Duration::from_millis(150);

bench_test!(silence_then_recovery, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    status(&mut ctx, d).await;
    tb.sim.faults().set(FaultSet {
        silence: true,
        ..FaultSet::default()
    });
    let s = d.role(Role::Status).unwrap();
    let r = tokio::time::timeout(SHORT, ctx.read_holding_registers(s.address, 1)).await;
    assert!(r.is_err(), "silence: {r:?}");
    assert!(tb.sim.faults().counters().silenced >= 1);
    tb.sim.faults().clear();
    // A fresh client (the old context may hold a half-finished request).
    drop(ctx);
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    status(&mut ctx, d).await;
});

bench_test!(exception_replies, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    tb.sim.faults().set(FaultSet {
        exception: Some(4),
        ..FaultSet::default()
    });
    let s = d.role(Role::Status).unwrap();
    let r = within("read", ctx.read_holding_registers(s.address, 1))
        .await
        .unwrap();
    assert_eq!(r, Err(ExceptionCode::ServerDeviceFailure));
    tb.sim.faults().clear();
    status(&mut ctx, d).await;
});

bench_test!(fixed_delay, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    tb.sim.faults().set(FaultSet {
        delay_ms: 60.0,
        ..FaultSet::default()
    });
    let t0 = Instant::now();
    status(&mut ctx, d).await;
    assert!(
        t0.elapsed() >= Duration::from_millis(60),
        "{:?}",
        t0.elapsed()
    );
    tb.sim.faults().clear();
    // The quickest of five round trips: a busy PC can hold one reply on a pty past 60 ms (the
    // test command's load was measured doing so), a delay still in force holds all of them.
    let mut quickest = Duration::MAX;
    for _ in 0..5 {
        let t0 = Instant::now();
        status(&mut ctx, d).await;
        quickest = quickest.min(t0.elapsed());
    }
    assert!(quickest < Duration::from_millis(60), "{quickest:?}");
});

bench_test!(stuck_sensor_value, |tb| {
    let (d, s) = (&tb.drive, &tb.sensor);
    let ep = tb.sim.endpoints().clone();
    // One line, two units (an RTU port opens once).
    let mut ctx = tb.raw(ep.sensor_unit).await;
    let before = read_role(&mut ctx, s, Role::MeasuredTorque).await;
    tb.sim.faults().set(FaultSet {
        stuck_unit: Some(ep.sensor_unit),
        ..FaultSet::default()
    });
    ctx.set_slave(Slave(ep.drive_unit));
    enable(&mut ctx, d).await;
    write_role(
        &mut ctx,
        d,
        Role::Mode,
        d.modes[&protocols::Mode::Velocity] as f64,
    )
    .await;
    hold(&mut ctx, d, Role::VelocityCommand, 2.0, 300).await;
    ctx.set_slave(Slave(ep.sensor_unit));
    for _ in 0..5 {
        assert_eq!(read_role(&mut ctx, s, Role::MeasuredTorque).await, before);
    }
    assert!(tb.sim.faults().counters().stuck >= 5);
    tb.sim.faults().clear();
    let after = read_role(&mut ctx, s, Role::MeasuredTorque).await;
    assert!((after - before).abs() > 0.5, "unstuck: {before} → {after}");
});

bench_test!(injected_drive_fault, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    enable(&mut ctx, d).await;
    tb.sim.trip_drive();
    assert_eq!(status(&mut ctx, d).await & 0x4F, 0x08);
    assert_eq!(
        read_role(&mut ctx, d, Role::FaultCode).await,
        f64::from(0xFF00)
    );
});

bench_test!(disconnect_then_reconnect, |tb| {
    let d = &tb.drive;
    let unit = tb.sim.endpoints().drive_unit;
    let mut ctx = tb.raw(unit).await;
    status(&mut ctx, d).await;
    tb.sim.faults().set(FaultSet {
        disconnect: true,
        ..FaultSet::default()
    });
    let s = d.role(Role::Status).unwrap();
    let r = tokio::time::timeout(SHORT, ctx.read_holding_registers(s.address, 1)).await;
    assert!(
        !matches!(r, Ok(Ok(Ok(_)))),
        "a cut line must not answer: {r:?}"
    );
    assert!(tb.sim.faults().counters().disconnects >= 1);
    tb.sim.faults().clear();
    drop(ctx);
    // A client that lost the line reopens and retries.
    let mut answered = false;
    for _ in 0..5 {
        let mut ctx = tb.raw(unit).await;
        let r = tokio::time::timeout(SHORT * 4, ctx.read_holding_registers(s.address, 1)).await;
        if matches!(r, Ok(Ok(Ok(_)))) {
            answered = true;
            break;
        }
    }
    assert!(
        answered,
        "the line answers again after the disconnect is cleared"
    );
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupted_crc_is_not_taken_for_an_answer() {
    let tb = TestBench::virtual_time(Link::Rtu).await;
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    status(&mut ctx, d).await;
    tb.sim.faults().set(FaultSet {
        corrupt_crc: true,
        ..FaultSet::default()
    });
    let s = d.role(Role::Status).unwrap();
    let r = tokio::time::timeout(SHORT, ctx.read_holding_registers(s.address, 1)).await;
    assert!(
        !matches!(r, Ok(Ok(Ok(_)))),
        "a bad CRC must not pass: {r:?}"
    );
    assert!(tb.sim.faults().counters().corrupted >= 1);
    tb.sim.faults().clear();
    drop(ctx);
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    status(&mut ctx, d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rtu_line_survives_garbage() {
    use tokio::io::AsyncWriteExt;
    // tokio-modbus's RTU server gives up after 20 undecodable bytes; the simulator restarts it
    // behind the same pty path.
    let tb = TestBench::virtual_time(Link::Rtu).await;
    let ep = tb.sim.endpoints().clone();
    let mut port =
        tokio_serial::SerialStream::open(&tokio_serial::new(ep.rtu.as_deref().unwrap(), 115_200))
            .unwrap();
    port.write_all(&[0xFF; 200]).await.unwrap();
    port.flush().await.unwrap();
    let mut ctx = tokio_modbus::client::rtu::attach_slave(port, Slave(ep.drive_unit));
    let s = tb.drive.role(Role::Status).unwrap();
    let mut answered = false;
    for _ in 0..10 {
        let r = tokio::time::timeout(SHORT, ctx.read_holding_registers(s.address, 1)).await;
        if let Ok(Ok(Ok(sw))) = r {
            assert_eq!(sw[0] & 0x4F, 0x40);
            answered = true;
            break;
        }
    }
    assert!(answered, "the line answers again after garbage");
}
