//! Device profiles → register images: the simulator serves exactly the map in the profile
//! files the clients use (one source of truth; no address appears in this crate).

use crate::device::{Behaviour, Bits, DeviceMap, EMULATED_DECIMALS, ModeValues, Role};
use crate::image::{Image, Slot, Table};
use crate::physics::Action;
use crate::physics::SimError;
use protocols::profile::{Mode as PMode, Step};
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
    /// The comms watchdog at power-on \[s\], when the device fixes it: a drive emulated from its
    /// own profile starts with its watchdog off (the Delta's P3-04 factory setting; a drive
    /// whose profile maps none has none), so only the client's write at connect arms it. `None`:
    /// the plant's `watchdog_s` (the simulated CiA 402 drive's 100 ms).
    pub(crate) watchdog_at_power_on_s: Option<f64>,
    /// The silence the device needs on an RTU line before a frame, where its profile sets one
    /// (`timing.inter_frame_gap_ms`, the Delta's 10 ms); `None`: t3.5.
    pub(crate) silence: Option<std::time::Duration>,
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
    // A transmitter whose readings take their decimal places from another register: that
    // register reads EMULATED_DECIMALS, the readings are scaled to match, and the register's
    // other meaning (a status word sharing it) is not published over it.
    let decimals_from: Vec<&str> = profile
        .signals
        .iter()
        .filter_map(|s| s.scale_exp_from.as_deref())
        .collect();
    let decimals_at: Vec<u16> = profile
        .signals
        .iter()
        .filter(|s| decimals_from.contains(&s.name.as_str()))
        .map(|s| s.address)
        .collect();
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
        if decimals_from.contains(&s.name.as_str()) {
            role = Some(Role::Decimals);
        } else if role == Some(Role::Status) && decimals_at.contains(&s.address) {
            role = None;
        }
        if role.is_none() && !sensor && s.name == "temperature" && !s.access.writable() {
            // No profile role: a reading only `[[suspend]]` conditions use, by name.
            role = Some(Role::Temperature);
        }
        if role.is_none() && sensor {
            // The sensor's tare command and its f32 mirror of the torque carry no role.
            if s.name == "zero" && s.access.writable() {
                role = Some(Role::Tare);
            } else if s.si_unit() == "N m" && !s.access.writable() {
                role = Some(Role::MeasuredTorque);
            }
        }
        let mut emulated = with_emulated_decimals(s);
        if role == Some(Role::WatchdogTimeout) {
            // The drive holds "off" too (0); the profile's limits bound what a client writes.
            (emulated.min, emulated.max) = (None, None);
        }
        let enc: Arc<Signal> = Arc::new(emulated);
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
    let behaviour = if sensor {
        Behaviour::Cia402
    } else {
        behaviour(profile, &slots)
    };
    let watchdog_at_power_on_s = matches!(behaviour, Behaviour::Profile { .. }).then_some(0.0);
    Ok(DeviceSetup {
        map: DeviceMap::new(Image::new(slots), roles, modes, sensor).with_behaviour(behaviour),
        unit: profile.transport.unit_id,
        turnaround_s: profile.timing.turnaround.as_secs_f64(),
        watchdog_at_power_on_s,
        silence: profile.timing.inter_frame_gap,
    })
}

/// How the drive of `profile` behaves: CiA 402 when its status patterns name CiA 402's own
/// `switch_on_disabled` state, else what its sequences and `[status]` patterns say (see
/// [`Behaviour::Profile`]). The first sequence to claim a write keeps it: `enable`, `disable`,
/// then `fault_reset` (whose closing write of 0 on some drives is the enable write too).
fn behaviour(profile: &Profile, slots: &[Slot]) -> Behaviour {
    if profile.status_pattern("switch_on_disabled").is_some() {
        return Behaviour::Cia402;
    }
    let bits = |name: &str| {
        profile.status_pattern(name).map(|p| Bits {
            mask: p.mask as u16,
            value: p.value as u16,
        })
    };
    let mut writes: Vec<(usize, f64, Action)> = Vec::new();
    for (name, action) in [
        ("enable", Action::Enable),
        ("disable", Action::Disable),
        ("fault_reset", Action::ClearFault),
    ] {
        let Some(seq) = profile.sequences.iter().find(|q| q.name == name) else {
            continue;
        };
        for step in &seq.steps {
            if let Step::Write { signal, value, .. } = step
                && let Some(slot) = slots.iter().position(|s| s.name == *signal)
                && !writes
                    .iter()
                    .any(|(i, v, _)| *i == slot && (v - value).abs() < 0.5)
            {
                writes.push((slot, *value, action));
            }
        }
    }
    Behaviour::Profile {
        writes,
        ready: bits("ready"),
        enabled: bits("enabled"),
        fault: bits("fault"),
    }
}

/// Encodes `v`, clamped to the signal's limits and its type's range (feedback saturates like a
/// real device's register rather than vanishing).
/// `s` as the emulator encodes it: a reading scaled by another register's decimal places gets
/// them folded into its scale.
fn with_emulated_decimals(s: &Signal) -> Signal {
    let mut s = s.clone();
    if s.scale_exp_from.take().is_some() {
        s.scale *= 10f64.powi(-EMULATED_DECIMALS);
    }
    s
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::{Sim, SimParams, default_truth};
    use tokio_modbus::{Request, Response};

    fn delta() -> DeviceSetup {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../profiles/delta-asda-a2.toml"
        );
        load(Some(Path::new(path)), false).unwrap()
    }

    /// The first word at `address` as a client reads it, after a publication.
    fn word(d: &mut DeviceSetup, sim: &mut Sim, address: u16) -> u16 {
        d.map.publish(&sim.feedback(), sim.params.watchdog_s);
        match d.map.serve(&Request::ReadHoldingRegisters(address, 1), sim) {
            Ok(Response::ReadHoldingRegisters(words)) => words[0],
            other => panic!("{other:?}"),
        }
    }

    /// The Delta's P0-46 (0x005C; low word first, so its bits are in the first word).
    fn status(d: &mut DeviceSetup, sim: &mut Sim) -> u16 {
        word(d, sim, 0x005C)
    }

    /// The Delta's emulation reads its own status bits (SRDY, SON, ALRM), enables on its
    /// software DI1 (P4-07 bit 0), keeps P2-30 = 5 as a plain setting, and clears a trip on
    /// `P0-01 = 0`, its fault_reset write, not on CiA 402's controlword.
    #[test]
    fn the_delta_shows_its_own_status_bits_and_resets_by_its_own_sequence() {
        let mut d = delta();
        let mut sim = Sim::new(SimParams::default(), &default_truth()).unwrap();
        assert_eq!(status(&mut d, &mut sim), 0x0001, "ready, not on, no alarm");
        // P2-30 = 5 (0x023C, low word first): no EEPROM writes; the servo stays off.
        d.map
            .serve(
                &Request::WriteMultipleRegisters(0x023C, vec![5, 0].into()),
                &mut sim,
            )
            .unwrap();
        assert_eq!(word(&mut d, &mut sim, 0x023C), 5);
        assert_eq!(status(&mut d, &mut sim), 0x0001);
        // P4-07 = 1 (0x040E): SDI1, servo on.
        d.map
            .serve(
                &Request::WriteMultipleRegisters(0x040E, vec![1, 0].into()),
                &mut sim,
            )
            .unwrap();
        assert_eq!(status(&mut d, &mut sim), 0x0003);
        sim.apply(Action::Trip);
        assert_eq!(status(&mut d, &mut sim), 0x0040, "alarm: not ready, not on");
        // P0-01 = 0 (0x0002): the alarm clears, the servo stays off.
        d.map
            .serve(
                &Request::WriteMultipleRegisters(0x0002, vec![0, 0].into()),
                &mut sim,
            )
            .unwrap();
        assert_eq!(status(&mut d, &mut sim), 0x0001);
    }

    /// The Delta's watchdog (P3-04, 0x0308) is off at power-on, as its factory setting, and
    /// reads 0 though a client may only write 1..20 s; the client's write arms it.
    #[test]
    fn the_delta_starts_with_its_watchdog_off_until_a_client_arms_it() {
        let mut d = delta();
        assert_eq!(d.watchdog_at_power_on_s, Some(0.0));
        let params = SimParams {
            watchdog_s: 0.0,
            ..SimParams::default()
        };
        let mut sim = Sim::new(params, &default_truth()).unwrap();
        assert_eq!(word(&mut d, &mut sim, 0x0308), 0);
        d.map
            .serve(
                &Request::WriteMultipleRegisters(0x0308, vec![1, 0].into()),
                &mut sim,
            )
            .unwrap();
        assert_eq!(sim.params.watchdog_s, 1.0);
        assert_eq!(word(&mut d, &mut sim, 0x0308), 1);
        assert_eq!(load(None, false).unwrap().watchdog_at_power_on_s, None);
    }

    /// The SINAMICS V90 emulated from its profile: the status word (40110, PDU 109) shows ready,
    /// then operation enabled once the control word (40100, PDU 99) has bit 0, then the fault
    /// bit on a trip; the speed setpoint (40101) in 0x4000 = 100 % reaches the plant as rad/s.
    #[test]
    fn the_v90_enables_by_its_control_word_and_takes_its_scaled_speed_setpoint() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../profiles/siemens-sinamics-v90.toml"
        );
        let mut d = load(Some(Path::new(path)), false).unwrap();
        let mut sim = Sim::new(SimParams::default(), &default_truth()).unwrap();
        // Speed control is set on the panel (p29003), not over the bus.
        sim.apply(Action::SetMode(crate::physics::Mode::Velocity));
        assert_eq!(
            word(&mut d, &mut sim, 109) & 0x000F,
            0x0001,
            "ready, not enabled"
        );
        d.map
            .serve(&Request::WriteSingleRegister(99, 1), &mut sim)
            .unwrap();
        assert_eq!(
            word(&mut d, &mut sim, 109) & 0x000F,
            0x0005,
            "operation enabled"
        );
        d.map
            .serve(&Request::WriteSingleRegister(100, 0x2000), &mut sim)
            .unwrap();
        let rad_s = 1500.0 * std::f64::consts::TAU / 60.0;
        assert!(
            (sim.feedback().setpoint - rad_s).abs() < 1e-9,
            "{}",
            sim.feedback().setpoint
        );
        sim.apply(Action::Trip);
        assert_eq!(
            word(&mut d, &mut sim, 109) & 0x0008,
            0x0008,
            "fault present"
        );
    }

    #[test]
    fn the_shipped_simulated_drive_keeps_cia_402() {
        let mut d = load(None, false).unwrap();
        let mut sim = Sim::new(SimParams::default(), &default_truth()).unwrap();
        let sw = word(&mut d, &mut sim, 0x0020);
        assert_eq!(sw & 0x006F, 0x0040, "switch on disabled: {sw:#06x}");
    }
}
