//! The torque-sensor client: measured torque in N m, plus the sensor's status and heartbeat.

use std::sync::Arc;

use crate::device::DeviceIo;
use crate::error::Error;
use crate::profile::{DeviceKind, Profile, ReadBlock, Role};
use crate::transport::SharedLink;

/// One torque sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct TorqueReading {
    /// Measured torque, N m.
    pub torque_nm: f64,
    /// Raw status word, if the profile has one.
    pub status: Option<u64>,
    /// Status matches the profile's `valid` pattern (`None` without one).
    pub valid: Option<bool>,
    /// Status matches the profile's `fault` or `overload` pattern.
    pub fault: Option<bool>,
    /// The sensor's sample counter.
    pub heartbeat: Option<u64>,
}

/// A torque sensor described by a profile, on a (shared) link.
#[derive(Debug, Clone)]
pub struct TorqueSensor {
    io: DeviceIo,
    plan: Vec<ReadBlock>,
}

impl TorqueSensor {
    /// Builds the client. The profile must describe a torque sensor.
    pub fn new(profile: Arc<Profile>, link: SharedLink) -> Result<TorqueSensor, Error> {
        if profile.device.kind != DeviceKind::TorqueSensor {
            return Err(
                profile.unsupported("the TorqueSensor client (it is not a torque sensor)".into())
            );
        }
        let io = DeviceIo::new(profile, link);
        let plan =
            io.plan(&io.role_indices(&[Role::MeasuredTorque, Role::Status, Role::Heartbeat]));
        Ok(TorqueSensor { io, plan })
    }

    /// Uses another unit id than the profile's.
    pub fn with_unit(mut self, unit: u8) -> TorqueSensor {
        self.io = self.io.with_unit(unit);
        self
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        self.io.profile()
    }

    /// The generic signal access underneath.
    pub fn io(&self) -> &DeviceIo {
        &self.io
    }

    /// Measured torque, N m.
    pub async fn read_torque(&mut self) -> Result<f64, Error> {
        Ok(self.read().await?.torque_nm)
    }

    /// Torque with status and heartbeat (one request for the shipped simulated sensor).
    pub async fn read(&mut self) -> Result<TorqueReading, Error> {
        let values = self.io.read_blocks(&self.plan).await?;
        let p = self.io.profile();
        let mut r = TorqueReading::default();
        for v in &values {
            match v.role {
                Some(Role::MeasuredTorque) => r.torque_nm = v.value,
                Some(Role::Status) => {
                    r.status = v.raw.as_bits();
                    if let Some(b) = r.status {
                        r.valid = p.status_pattern("valid").map(|s| s.matches(b));
                        let f = ["fault", "overload"]
                            .iter()
                            .filter_map(|n| p.status_pattern(n))
                            .map(|s| s.matches(b))
                            .reduce(|a, b| a || b);
                        r.fault = f;
                    }
                }
                Some(Role::Heartbeat) => r.heartbeat = v.raw.as_bits(),
                _ => {}
            }
        }
        Ok(r)
    }

    /// Zeroes the reading: the profile's `tare` sequence.
    pub async fn tare(&mut self) -> Result<(), Error> {
        self.io.run_sequence("tare").await
    }
}
