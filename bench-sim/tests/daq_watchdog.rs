//! The emulated T7's outputs on a drive in analog mode (DAC0 its torque input, DIO2 its
//! enable): this project's client makes them safe and reads them back, arms the device's
//! watchdog, and the watchdog makes the bench safe when the client is gone. The armed
//! registers are read back by `async_labjack`, an independent client.

use crate::util::{Link, TestBench};
use async_labjack::client::LabjackClient;
use async_labjack::{WATCHDOG_DAC0_DEFAULT, WATCHDOG_ENABLE_DEFAULT, WATCHDOG_TIMEOUT_S_DEFAULT};
use bench_sim::daq::{DaqSim, shipped_t7};
use bench_sim::{Action, Mode};
use protocols::daq::{DaqClient, DriveOutputs};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENABLE_DIO: u16 = 2;
const OUTPUTS: DriveOutputs = DriveOutputs {
    dac: 0,
    safe_v: 2.5,
    enable_dio: Some(ENABLE_DIO),
};

async fn analog_bench() -> (TestBench, DaqSim, DaqClient) {
    let bench = TestBench::virtual_time(Link::Tcp).await;
    let daq = crate::daq::analog_daq(&bench, Some(ENABLE_DIO)).await;
    for a in [Action::SetWatchdog(0.0), Action::SetMode(Mode::Torque)] {
        assert!(bench.sim.bench().apply(a));
    }
    let profile = Arc::new(shipped_t7().unwrap());
    let c = DaqClient::connect(daq.endpoints().modbus, profile, Duration::from_secs(2))
        .await
        .unwrap();
    (bench, daq, c)
}

/// Enables the drive by its line and commands 0.2 N m through DAC0.
async fn drive_it(bench: &TestBench, c: &mut DaqClient) {
    c.set_dio(ENABLE_DIO, true).await.unwrap();
    c.write_dac(0, 3.0).await.unwrap();
    let fb = bench.sim.bench().feedback();
    assert!(fb.enabled, "the enable line enables the drive");
    assert!((fb.setpoint - 0.2).abs() < 1e-6, "{}", fb.setpoint);
}

fn safe(bench: &TestBench, daq: &DaqSim) -> bool {
    let (dac0, dio) = daq.outputs();
    let fb = bench.sim.bench().feedback();
    dac0 == 2.5 && dio & (1 << ENABLE_DIO) == 0 && !fb.enabled && fb.setpoint == 0.0
}

#[tokio::test]
async fn the_client_makes_the_outputs_safe_and_reads_them_back() {
    let (bench, daq, mut c) = analog_bench().await;
    drive_it(&bench, &mut c).await;
    let read = c.make_outputs_safe(&OUTPUTS).await.unwrap();
    assert_eq!((read.dac_v, read.enable), (2.5, Some(false)));
    assert!(safe(&bench, &daq));
    daq.shutdown().await;
}

/// A killed daemon: the connection closes with the drive enabled and commanded; within the
/// watchdog's timeout (1 s, wall-clock as the device's) the bench is safe without a request.
#[tokio::test]
async fn the_armed_watchdog_makes_the_bench_safe_when_the_client_is_gone() {
    let (bench, daq, mut c) = analog_bench().await;
    c.arm_watchdog(&OUTPUTS, 1).await.unwrap();
    let mut lj = LabjackClient::connect(daq.endpoints().modbus)
        .await
        .unwrap();
    assert_eq!(WATCHDOG_ENABLE_DEFAULT.read(&mut lj).await.unwrap(), 1);
    assert_eq!(WATCHDOG_TIMEOUT_S_DEFAULT.read(&mut lj).await.unwrap(), 1);
    assert_eq!(WATCHDOG_DAC0_DEFAULT.read(&mut lj).await.unwrap(), 2.5);
    drop(lj);
    drive_it(&bench, &mut c).await;
    drop(c);
    let t0 = Instant::now();
    while !safe(&bench, &daq) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "not safe 10 s after the client left: {:?}, enabled {}",
            daq.outputs(),
            bench.sim.bench().feedback().enabled
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    daq.shutdown().await;
}

/// Without the watchdog armed, nothing makes the bench safe: the test above is the
/// watchdog's doing. (Bounded by the same 1 s plus a margin, on the wall clock.)
#[tokio::test]
async fn an_unarmed_device_keeps_its_outputs_when_the_client_is_gone() {
    let (bench, daq, mut c) = analog_bench().await;
    drive_it(&bench, &mut c).await;
    drop(c);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!safe(&bench, &daq));
    assert_eq!(daq.outputs().0, 3.0);
    daq.shutdown().await;
}

#[tokio::test]
async fn a_watchdog_on_a_dac_without_a_default_is_refused() {
    let (_bench, daq, mut c) = analog_bench().await;
    let o = DriveOutputs { dac: 1, ..OUTPUTS };
    let e = c.arm_watchdog(&o, 1).await.unwrap_err().to_string();
    assert!(e.contains("DAC1"), "{e}");
    daq.shutdown().await;
}
