//! Test helpers: a simulated bench on TCP or an RTU pty, and raw clients addressed through the
//! shipped profiles (no addresses in the tests).

#![allow(dead_code)]

use bench_sim::{Clock, RtuConfig, SimBench, SimConfig};
use protocols::{Profile, Role};
use std::time::Duration;
use tokio_modbus::client::Context;
use tokio_modbus::prelude::*;

/// Simulated time per request in virtual-time tests [s].
pub const TICK_S: f64 = 1e-3;

/// Which transport a test runs over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Link {
    Tcp,
    /// RTU on a pty without wire timing (fast).
    Rtu,
    /// RTU on a pty with the wire timing of this baud rate.
    RtuTimed(u32),
}

/// A running simulated bench and the profiles it serves.
pub struct TestBench {
    pub sim: SimBench,
    pub drive: Profile,
    pub sensor: Profile,
    pub link: Link,
}

impl TestBench {
    pub async fn start(link: Link, clock: Clock) -> TestBench {
        let rtu = match link {
            Link::Tcp => None,
            Link::Rtu => Some(RtuConfig {
                baud: 115_200,
                wire_timing: false,
                turnaround_s: None,
            }),
            Link::RtuTimed(baud) => Some(RtuConfig {
                baud,
                wire_timing: true,
                turnaround_s: None,
            }),
        };
        let config = SimConfig {
            clock,
            tcp: (link == Link::Tcp).then(|| "127.0.0.1:0".parse().unwrap()),
            rtu,
            ..SimConfig::default()
        };
        TestBench {
            sim: SimBench::start(config).await.expect("simulator starts"),
            drive: bench_sim::shipped(false).unwrap(),
            sensor: bench_sim::shipped(true).unwrap(),
            link,
        }
    }

    /// A virtual-time bench.
    pub async fn virtual_time(link: Link) -> TestBench {
        TestBench::start(
            link,
            Clock::Virtual {
                per_request_s: TICK_S,
            },
        )
        .await
    }

    /// A raw tokio-modbus client addressed to `unit`.
    pub async fn raw(&self, unit: u8) -> Context {
        let ep = self.sim.endpoints();
        match self.link {
            Link::Tcp => tokio_modbus::client::tcp::connect_slave(ep.tcp.unwrap(), Slave(unit))
                .await
                .expect("tcp connect"),
            Link::Rtu | Link::RtuTimed(_) => {
                let port = tokio_serial::SerialStream::open(&tokio_serial::new(
                    ep.rtu.as_deref().unwrap(),
                    ep.baud.unwrap(),
                ))
                .expect("open pty");
                tokio_modbus::client::rtu::attach_slave(port, Slave(unit))
            }
        }
    }
}

/// Runs an async test body once per link, each on a fresh bench.
#[macro_export]
macro_rules! bench_test {
    ($name:ident, |$tb:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn tcp() {
                let $tb = $crate::util::TestBench::virtual_time($crate::util::Link::Tcp).await;
                $body
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn rtu() {
                let $tb = $crate::util::TestBench::virtual_time($crate::util::Link::Rtu).await;
                $body
            }
        }
    };
}

/// Every call of a test gets a deadline: a hang is a failure, not a stuck run.
pub async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 5 s"))
}

/// Reads one signal (by role) in SI units.
pub async fn read_role(ctx: &mut Context, p: &Profile, role: Role) -> f64 {
    let s = p
        .role(role)
        .unwrap_or_else(|| panic!("{} has no {role:?}", p.file));
    let regs = within("read", ctx.read_holding_registers(s.address, s.registers()))
        .await
        .expect("transport")
        .expect("no exception");
    s.decode(&regs).unwrap()
}

/// Writes one signal (by role) in SI units.
pub async fn write_role(ctx: &mut Context, p: &Profile, role: Role, value: f64) {
    let s = p
        .role(role)
        .unwrap_or_else(|| panic!("{} has no {role:?}", p.file));
    let regs = s.encode(value).unwrap();
    within("write", ctx.write_multiple_registers(s.address, &regs))
        .await
        .expect("transport")
        .expect("no exception");
}

/// The statusword masked as the profile's `[status]` patterns compare it.
pub async fn status(ctx: &mut Context, p: &Profile) -> u16 {
    read_role(ctx, p, Role::Status).await as u16
}

/// Enables the drive with the CiA 402 sequence over a raw client, checking each state.
pub async fn enable(ctx: &mut Context, p: &Profile) {
    for (cw, expect) in [(0x06, 0x21), (0x07, 0x23), (0x0F, 0x27)] {
        write_role(ctx, p, Role::ControlWord, f64::from(cw)).await;
        let sw = status(ctx, p).await;
        assert_eq!(
            sw & 0x6F,
            expect,
            "controlword {cw:#06x} → statusword {sw:#06x}"
        );
    }
}

/// Sends `value` to `role` every tick for `n` ticks (feeding the watchdog).
pub async fn hold(ctx: &mut Context, p: &Profile, role: Role, value: f64, n: usize) {
    for _ in 0..n {
        write_role(ctx, p, role, value).await;
    }
}
