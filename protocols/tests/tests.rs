//! Integration tests of the protocols crate: real Modbus bytes over TCP sockets and ptys.

#![allow(missing_debug_implementations)]

mod util;

mod clients;
mod interop;
mod profiles;
mod transports;

use util::{RtuSlave, Shared, SlaveState, TcpSlave};

/// Which transport a scenario runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tcp,
    Rtu,
}

/// A test slave on either transport.
pub struct Bench {
    pub kind: Kind,
    pub state: Shared,
    pub tcp: Option<TcpSlave>,
    pub rtu: Option<RtuSlave>,
}

impl Bench {
    pub async fn start(kind: Kind, state: SlaveState) -> Bench {
        match kind {
            Kind::Tcp => {
                let s = TcpSlave::start(state).await;
                Bench {
                    kind,
                    state: s.state.clone(),
                    tcp: Some(s),
                    rtu: None,
                }
            }
            Kind::Rtu => {
                let s = RtuSlave::start(state).await;
                Bench {
                    kind,
                    state: s.state.clone(),
                    tcp: None,
                    rtu: Some(s),
                }
            }
        }
    }

    /// A link configuration with the profile's timing.
    pub fn config(&self, profile: &protocols::Profile) -> protocols::LinkConfig {
        match self.kind {
            Kind::Tcp => protocols::LinkConfig::tcp(self.tcp.as_ref().unwrap().endpoint(), profile),
            Kind::Rtu => {
                protocols::LinkConfig::serial(self.rtu.as_ref().unwrap().endpoint(), None, profile)
            }
        }
    }
}

/// Runs an `async fn(Kind)` scenario over TCP and again over RTU on a pty.
macro_rules! bench_test {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn tcp() {
                super::$name(crate::Kind::Tcp).await
            }
            #[tokio::test]
            async fn rtu() {
                super::$name(crate::Kind::Rtu).await
            }
        }
    };
}
pub(crate) use bench_test;

/// The clients move into the control-loop task and their futures run on a multi-thread
/// runtime: both must be `Send` (checked at compile time).
#[allow(dead_code)]
fn send_sync_checks(
    d: &mut protocols::Drive,
    s: &mut protocols::TorqueSensor,
    l: &mut protocols::Link,
) {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<protocols::Drive>();
    send_sync::<protocols::TorqueSensor>();
    send_sync::<protocols::Profile>();
    send_sync::<protocols::SharedLink>();
    send_sync::<protocols::Error>();
    send(&d.command_and_read(0.0));
    send(&d.enable());
    send(&s.read());
    send(&l.read(1, protocols::Table::Holding, 0, 1));
}
