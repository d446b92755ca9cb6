//! The simulated bench over the wire (TCP and an RTU pty), with a raw tokio-modbus client
//! addressed through the shipped profiles.

use crate::bench_test;
use crate::util::*;
use protocols::Role;
use tokio_modbus::ExceptionCode;
use tokio_modbus::prelude::*;

bench_test!(enable_every_mode_command_and_feedback, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    // Power-up state: switch on disabled.
    assert_eq!(status(&mut ctx, d).await & 0x4F, 0x40);
    enable(&mut ctx, d).await;
    let mode_value = |m| d.modes[&m] as f64;
    use protocols::Mode;
    // Velocity mode.
    write_role(&mut ctx, d, Role::Mode, mode_value(Mode::Velocity)).await;
    assert_eq!(
        read_role(&mut ctx, d, Role::ModeDisplay).await,
        mode_value(Mode::Velocity)
    );
    hold(&mut ctx, d, Role::VelocityCommand, 5.0, 500).await;
    let v = read_role(&mut ctx, d, Role::VelocityFeedback).await;
    assert!((v - 5.0).abs() < 0.05, "velocity feedback {v}");
    // Position mode: go to 2 rad.
    write_role(&mut ctx, d, Role::Mode, mode_value(Mode::Position)).await;
    hold(&mut ctx, d, Role::PositionCommand, 2.0, 800).await;
    let x = read_role(&mut ctx, d, Role::PositionFeedback).await;
    // The drive's soft PID hunts around the target against the true friction's stiction
    // (stick-slip limit cycle, ±20 mrad): within that band.
    assert!((x - 2.0).abs() < 3e-2, "position feedback {x}");
    // Torque mode: 3 N m beats friction and drives the motor torque feedback.
    write_role(&mut ctx, d, Role::Mode, mode_value(Mode::Torque)).await;
    hold(&mut ctx, d, Role::TorqueCommand, 3.0, 50).await;
    let t = read_role(&mut ctx, d, Role::TorqueFeedback).await;
    assert!((t - 3.0).abs() < 1e-3, "torque feedback {t}");
    let truth = tb.sim.bench().truth();
    assert!(truth.v_rad_s > 1.0, "{truth:?}");
    // Disable: torque off at once.
    write_role(&mut ctx, d, Role::ControlWord, 6.0).await;
    assert_eq!(status(&mut ctx, d).await & 0x6F, 0x21);
    assert_eq!(read_role(&mut ctx, d, Role::TorqueFeedback).await, 0.0);
});

bench_test!(sensor_reads_the_true_friction, |tb| {
    let (d, s) = (&tb.drive, &tb.sensor);
    let ep = tb.sim.endpoints().clone();
    let mut ctx = tb.raw(ep.drive_unit).await;
    enable(&mut ctx, d).await;
    write_role(
        &mut ctx,
        d,
        Role::Mode,
        d.modes[&protocols::Mode::Velocity] as f64,
    )
    .await;
    hold(&mut ctx, d, Role::VelocityCommand, 2.0, 500).await;
    ctx.set_slave(Slave(ep.sensor_unit));
    let mut sum = 0.0;
    for _ in 0..50 {
        sum += read_role(&mut ctx, s, Role::MeasuredTorque).await;
    }
    let expected = tb.sim.bench().truth().friction_nm;
    assert!(
        (sum / 50.0 - expected).abs() < 0.01,
        "sensor {} vs friction {expected}",
        sum / 50.0
    );
});

bench_test!(illegal_address_and_value_are_exceptions, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    let end = d
        .signals
        .iter()
        .map(|s| s.address + s.registers())
        .max()
        .unwrap();
    let rsp = within("read", ctx.read_holding_registers(end, 1))
        .await
        .unwrap();
    assert_eq!(rsp, Err(ExceptionCode::IllegalDataAddress));
    // Writing a read-only signal.
    let fb = d.role(Role::PositionFeedback).unwrap();
    let rsp = within("write", ctx.write_multiple_registers(fb.address, &[0, 0]))
        .await
        .unwrap();
    assert_eq!(rsp, Err(ExceptionCode::IllegalDataAddress));
    // A torque command beyond the profile's limit.
    let cmd = d.role(Role::TorqueCommand).unwrap();
    let mut too_big = cmd.clone();
    too_big.max = None;
    let regs = too_big.encode(cmd.max.unwrap() * 2.0).unwrap();
    let rsp = within("write", ctx.write_multiple_registers(cmd.address, &regs))
        .await
        .unwrap();
    assert_eq!(rsp, Err(ExceptionCode::IllegalDataValue));
    // Half of a 32-bit signal.
    let rsp = within("write", ctx.write_single_register(cmd.address, 1))
        .await
        .unwrap();
    assert_eq!(rsp, Err(ExceptionCode::IllegalDataAddress));
});

bench_test!(watchdog_disables_the_drive_with_the_fault_bit, |tb| {
    let d = &tb.drive;
    let mut ctx = tb.raw(tb.sim.endpoints().drive_unit).await;
    enable(&mut ctx, d).await;
    hold(&mut ctx, d, Role::TorqueCommand, 0.5, 20).await;
    // Reads do not feed the watchdog: 150 reads = 150 ms of simulated silence.
    for _ in 0..150 {
        status(&mut ctx, d).await;
    }
    let sw = status(&mut ctx, d).await;
    assert_eq!(sw & 0x4F, 0x08, "statusword {sw:#06x} has the fault bit");
    assert_eq!(
        read_role(&mut ctx, d, Role::FaultCode).await,
        f64::from(0x8130)
    );
    assert_eq!(read_role(&mut ctx, d, Role::TorqueFeedback).await, 0.0);
    // Fault reset (rising edge of bit 7) → switch on disabled; enable works again.
    write_role(&mut ctx, d, Role::ControlWord, 0.0).await;
    write_role(&mut ctx, d, Role::ControlWord, 128.0).await;
    assert_eq!(status(&mut ctx, d).await & 0x4F, 0x40);
    write_role(&mut ctx, d, Role::ControlWord, 0.0).await;
    enable(&mut ctx, d).await;
});

bench_test!(other_unit_ids_get_no_answer, |tb| {
    let ep = tb.sim.endpoints().clone();
    let mut ctx = tb.raw(ep.drive_unit.max(ep.sensor_unit) + 5).await;
    let r = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        ctx.read_holding_registers(0, 1),
    )
    .await;
    assert!(r.is_err(), "a unit nobody is must stay silent: {r:?}");
});
