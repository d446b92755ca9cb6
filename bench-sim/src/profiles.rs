//! Device profiles → register images: the simulator serves exactly the map in the profile
//! files the clients use (one source of truth; no address appears in this crate).

use crate::device::{DeviceMap, ModeValues, Role};
use crate::image::{Image, Slot, Table};
use crate::physics::SimError;
use protocols::profile::Mode as PMode;
use protocols::{Profile, Role as PRole, Signal};
use std::path::Path;
use std::sync::Arc;

/// The shipped simulated drive's profile (`profiles/sim-drive.toml`).
pub const SIM_DRIVE_TOML: &str = include_str!("../../profiles/sim-drive.toml");
/// The shipped simulated torque sensor's profile (`profiles/sim-torque-sensor.toml`).
pub const SIM_SENSOR_TOML: &str = include_str!("../../profiles/sim-torque-sensor.toml");

/// The shipped profiles, parsed.
pub fn shipped(sensor: bool) -> Result<Profile, SimError> {
    let (text, file) = if sensor {
        (SIM_SENSOR_TOML, "profiles/sim-torque-sensor.toml")
    } else {
        (SIM_DRIVE_TOML, "profiles/sim-drive.toml")
    };
    Profile::from_toml_str(text, file).map_err(|e| SimError::Profile(e.to_string()))
}

/// A device ready to serve.
#[derive(Debug)]
pub(crate) struct DeviceSetup {
    pub(crate) map: DeviceMap,
    pub(crate) unit: u8,
    pub(crate) turnaround_s: f64,
}

/// Loads a profile file (or the shipped one) and builds the device.
pub(crate) fn load(path: Option<&Path>, sensor: bool) -> Result<DeviceSetup, SimError> {
    let profile = match path {
        Some(p) => Profile::load(p).map_err(|e| SimError::Profile(e.to_string()))?,
        None => shipped(sensor)?,
    };
    device(&profile, sensor)
}

fn role_of(s: &Signal) -> Option<Role> {
    Some(match s.role? {
        PRole::ControlWord => Role::ControlWord,
        PRole::Enable => Role::Enable,
        PRole::Mode => Role::Mode,
        PRole::ModeDisplay => Role::ModeDisplay,
        PRole::Status => Role::Status,
        PRole::FaultCode => Role::FaultCode,
        PRole::TorqueCommand => Role::TorqueCommand,
        PRole::VelocityCommand => Role::SpeedCommand,
        PRole::PositionCommand => Role::PositionCommand,
        PRole::PositionFeedback => Role::PositionFeedback,
        PRole::VelocityFeedback => Role::VelocityFeedback,
        PRole::TorqueFeedback => Role::TorqueFeedback,
        PRole::MeasuredTorque => Role::MeasuredTorque,
        PRole::WatchdogTimeout => Role::WatchdogTimeout,
        PRole::MaxTorque => Role::MaxTorque,
        PRole::Heartbeat => Role::Heartbeat,
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

/// Builds the register image and roles of `profile`.
pub(crate) fn device(profile: &Profile, sensor: bool) -> Result<DeviceSetup, SimError> {
    let bad = |field: &str, reason: String| {
        SimError::Profile(format!("{}: {field}: {reason}", profile.file))
    };
    let mut slots = Vec::new();
    let mut roles = Vec::new();
    for s in &profile.signals {
        let table = match s.table {
            protocols::Table::Holding => Table::Holding,
            protocols::Table::Input => Table::Input,
            other => {
                return Err(bad(
                    &format!("signal '{}'", s.name),
                    format!(
                        "table '{}' is not served by the simulator (holding and input only)",
                        other.name()
                    ),
                ));
            }
        };
        let mut role = role_of(s);
        if role.is_none() && sensor {
            // The sensor's tare command and its f32 mirror of the torque carry no role.
            if s.name == "zero" && s.access.writable() {
                role = Some(Role::Tare);
            } else if s.si_unit() == "N m" && !s.access.writable() {
                role = Some(Role::MeasuredTorque);
            }
        }
        let enc: Arc<Signal> = Arc::new(s.clone());
        let dec = enc.clone();
        if let Some(r) = role {
            roles.push((slots.len(), r));
        }
        slots.push(Slot {
            name: s.name.clone(),
            table,
            address: s.address,
            count: s.registers(),
            readable: s.access.readable(),
            writable: s.access.writable(),
            encode: Box::new(move |v| encode_clamped(&enc, v)),
            decode: Box::new(move |regs| {
                let v = dec.decode(regs).ok()?;
                let tol = 1e-9 * v.abs().max(1.0);
                if dec.min.is_some_and(|m| v < m - tol) || dec.max.is_some_and(|m| v > m + tol) {
                    return None;
                }
                Some(v)
            }),
        });
    }
    let mode = |m: PMode, fallback: f64| profile.modes.get(&m).map_or(fallback, |&v| v as f64);
    let modes = ModeValues {
        torque: mode(PMode::Torque, 10.0),
        velocity: mode(PMode::Velocity, 9.0),
        position: mode(PMode::Position, 8.0),
    };
    Ok(DeviceSetup {
        map: DeviceMap::new(Image::new(slots), roles, modes, sensor),
        unit: profile.transport.unit_id,
        turnaround_s: profile.timing.turnaround.as_secs_f64(),
    })
}

/// Encodes `v`, clamped to the signal's limits and its type's range (feedback saturates like a
/// real device's register rather than vanishing).
fn encode_clamped(s: &Signal, v: f64) -> Option<Vec<u16>> {
    if let Ok(r) = s.encode(v) {
        return Some(r);
    }
    let mut v = if v.is_finite() { v } else { 0.0 };
    if let Some(m) = s.min {
        v = v.max(m);
    }
    if let Some(m) = s.max {
        v = v.min(m);
    }
    if let Ok(r) = s.encode(v) {
        return Some(r);
    }
    let (lo, hi) = s.ty.raw_range();
    let a = (lo * s.scale + s.offset) * s.unit.factor;
    let b = (hi * s.scale + s.offset) * s.unit.factor;
    s.encode(v.clamp(a.min(b), a.max(b))).ok()
}
