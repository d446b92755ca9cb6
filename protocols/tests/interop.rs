//! Interoperability with a Modbus stack we did not write: our `Drive` client against a
//! pymodbus 3.16.1 server holding the simulated drive's register map.

use std::time::Duration;

use protocols::{Drive, Link, LinkConfig, Mode};

use crate::util::{PtyBridge, PyServer, sim_drive};

async fn exercise(d: &mut Drive) {
    let fb = d.read_feedback().await.unwrap();
    assert_eq!((fb.enabled, fb.fault), (Some(false), Some(false)), "{fb:?}");
    d.enable().await.unwrap();
    assert_eq!(d.read_feedback().await.unwrap().enabled, Some(true));
    for (mode, value) in [
        (Mode::Torque, 0.125),
        (Mode::Velocity, 20.0),
        (Mode::Position, -2.0),
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
        assert!(
            (got - value).abs() < 1e-3,
            "{mode}: sent {value}, read {got}"
        );
    }
    d.set_mode(Mode::Torque).await.unwrap();
    let fb = d.command_and_read(-0.25).await.unwrap();
    assert!((fb.torque_nm.unwrap() + 0.25).abs() < 1e-9, "{fb:?}");
    // pymodbus answers an unmapped register with an exception.
    let err = d
        .io()
        .link()
        .lock()
        .await
        .read(1, protocols::Table::Holding, 0x0100, 1)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("illegal data address"), "{err}");
    d.disable().await.unwrap();
    assert_eq!(d.read_feedback().await.unwrap().enabled, Some(false));
}

#[tokio::test]
async fn drive_client_against_pymodbus_tcp_server() {
    let server = PyServer::start(&["tcp"]).await;
    let port: u16 = server
        .first_line
        .trim()
        .parse()
        .expect("port from the pymodbus server");
    let mut cfg = LinkConfig::tcp(format!("127.0.0.1:{port}"), &sim_drive());
    cfg.timeout = Duration::from_millis(1000);
    let link = Link::open(cfg).await.unwrap().shared();
    let mut d = Drive::new(sim_drive(), link.clone()).unwrap();
    exercise(&mut d).await;
    let s = link.lock().await.stats();
    assert_eq!(
        (s.timeouts, s.framing_errors, s.exceptions),
        (0, 0, 1),
        "{s:?}"
    );
}

#[tokio::test]
async fn drive_client_against_pymodbus_rtu_server_on_a_pty() {
    let bridge = PtyBridge::new();
    let server = PyServer::start(&["rtu", &bridge.device_path]).await;
    assert_eq!(server.first_line.trim(), "ready");
    let mut cfg = LinkConfig::serial(&bridge.client_path, Some(115_200), &sim_drive());
    cfg.timeout = Duration::from_millis(1000);
    let link = Link::open(cfg).await.unwrap().shared();
    let mut d = Drive::new(sim_drive(), link.clone()).unwrap();
    exercise(&mut d).await;
    let s = link.lock().await.stats();
    assert_eq!(
        (s.timeouts, s.crc_errors, s.framing_errors),
        (0, 0, 0),
        "{s:?}"
    );
}
