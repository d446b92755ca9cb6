//! The simulated drive and torque sensor: a register image laid out by a device profile, plus
//! what each role means to the plant.
//!
//! Writes are decoded per signal and turned into [`Action`]s on the plant by the signal's role;
//! feedback roles are published from [`Feedback`] after every plant batch. Reads return the
//! image. Any request the device accepts (read or write) that carries a command feeds the
//! watchdog; plain reads do not.

use crate::image::{Image, Refusal, Table};
use crate::physics::{Action, Feedback, Mode, Sim};
use tokio_modbus::{ExceptionCode, Request, Response};

/// Which device a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Served {
    Drive,
    Sensor,
}

/// What a signal means to the simulator (from the profile's `role`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    /// Power stage: non-zero enables, zero disables; reads back the state.
    Enable,
    /// CiA 402 controlword (6040h).
    ControlWord,
    /// Operating mode (6060h); the values per mode come from the profile.
    Mode,
    /// Active mode (6061h), published.
    ModeDisplay,
    /// Comms watchdog time \[s\] (0 = off).
    WatchdogTimeout,
    /// Maximum torque in every mode [N m] (CiA 402 6072h); reads back the torque in force.
    MaxTorque,
    /// Speed setpoint [rad/s].
    SpeedCommand,
    /// Torque setpoint [N m].
    TorqueCommand,
    /// Angle setpoint \[rad\].
    PositionCommand,
    /// Non-zero clears a latched fault.
    FaultReset,
    /// Drive: CiA 402 statusword (6041h); sensor: bit 0 valid, 1 overload, 3 fault. Published.
    Status,
    /// Fault code (603Fh), 0 = none. Published.
    FaultCode,
    /// +1 per publication (wraps). Published.
    Heartbeat,
    /// Encoder angle \[rad\]. Published.
    PositionFeedback,
    /// Velocity estimate [rad/s]. Published.
    VelocityFeedback,
    /// Motor torque after the current loop [N m]. Published.
    TorqueFeedback,
    /// Torque-sensor reading [N m] (minus the tare offset). Published.
    MeasuredTorque,
    /// Writing non-zero tares the sensor.
    Tare,
    /// The number of decimal places of the sensor's scaled readings (a transmitter's
    /// `scale_exp_from` source), fixed at [`EMULATED_DECIMALS`]. Published.
    Decimals,
    /// The drive's temperature [°C] (a drive signal named `temperature`). Published.
    Temperature,
}

/// The decimal places an emulated transmitter is set to: 0.001 N m per count.
pub const EMULATED_DECIMALS: i32 = 3;

/// Mode numbers as the device encodes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModeValues {
    /// Value meaning torque mode.
    pub torque: f64,
    /// Value meaning velocity mode.
    pub velocity: f64,
    /// Value meaning position mode.
    pub position: f64,
}

impl ModeValues {
    fn decode(&self, x: f64) -> Option<Mode> {
        [
            (self.torque, Mode::Torque),
            (self.velocity, Mode::Velocity),
            (self.position, Mode::Position),
        ]
        .into_iter()
        .find(|(v, _)| (v - x).abs() < 0.5)
        .map(|(_, m)| m)
    }

    fn encode(&self, m: Mode) -> f64 {
        match m {
            Mode::Torque => self.torque,
            Mode::Velocity => self.velocity,
            Mode::Position => self.position,
        }
    }
}

/// CiA 402 statusword bits the simulator sets.
pub mod statusword {
    /// Ready to switch on.
    pub const READY: u16 = 0x0001;
    /// Switched on.
    pub const SWITCHED_ON: u16 = 0x0002;
    /// Operation enabled.
    pub const OPERATION_ENABLED: u16 = 0x0004;
    /// Fault.
    pub const FAULT: u16 = 0x0008;
    /// Voltage enabled.
    pub const VOLTAGE_ENABLED: u16 = 0x0010;
    /// Quick stop (active low: set when not quick-stopping).
    pub const QUICK_STOP: u16 = 0x0020;
    /// Switch-on disabled.
    pub const SWITCH_ON_DISABLED: u16 = 0x0040;
    /// Remote (controlled over the bus).
    pub const REMOTE: u16 = 0x0200;
    /// Target reached.
    pub const TARGET_REACHED: u16 = 0x0400;
}

/// CiA 402 power states below "operation enabled" (which is the plant's `enabled`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum PowerState {
    #[default]
    SwitchOnDisabled,
    ReadyToSwitchOn,
    SwitchedOn,
}

/// Sensor range for the overload bit [N m].
const SENSOR_RANGE_NM: f64 = 10.0;

/// One `[status]` pattern of the profile: the bits under `mask` read `value` in that state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    /// Bits that matter.
    pub mask: u16,
    /// Their value in the state.
    pub value: u16,
}

impl Bits {
    fn set(self, word: u16) -> u16 {
        (word & !self.mask) | (self.value & self.mask)
    }

    /// The word outside the state: a bit of the mask flipped from the state's value.
    fn clear(self, word: u16) -> u16 {
        let bit = self.mask & self.mask.wrapping_neg();
        (word & !bit) | (!self.value & bit)
    }
}

/// How a drive shows its state and reads its commands.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Behaviour {
    /// CiA 402 (IEC 61800-7-201): the controlword state machine and the statusword bits (the
    /// shipped simulated drive).
    #[default]
    Cia402,
    /// A drive described by its profile's own sequences and `[status]` patterns (Delta,
    /// Oriental, ...): a write equal to a write step of its `enable`, `disable` or
    /// `fault_reset` sequence does what that sequence is for, and the status register reads
    /// its `ready`, `enabled` and `fault` patterns.
    Profile {
        /// `(slot, value, action)` per write step.
        writes: Vec<(usize, f64, Action)>,
        /// The `ready` pattern.
        ready: Option<Bits>,
        /// The `enabled` pattern.
        enabled: Option<Bits>,
        /// The `fault` pattern.
        fault: Option<Bits>,
    },
}

/// One device: its image and the roles of its signals.
#[derive(Debug)]
pub struct DeviceMap {
    /// The register image.
    pub image: Image,
    roles: Vec<(usize, Role)>,
    modes: ModeValues,
    sensor: bool,
    behaviour: Behaviour,
    power: PowerState,
    last_controlword: u16,
    heartbeat: u16,
    tare_nm: f64,
}

impl DeviceMap {
    /// A device over `image` whose slots have the given roles; `sensor` selects the torque
    /// sensor's meaning of the shared roles (status bits).
    pub fn new(
        image: Image,
        roles: Vec<(usize, Role)>,
        modes: ModeValues,
        sensor: bool,
    ) -> DeviceMap {
        DeviceMap {
            image,
            roles,
            modes,
            sensor,
            behaviour: Behaviour::default(),
            power: PowerState::default(),
            last_controlword: 0,
            heartbeat: 0,
            tare_nm: 0.0,
        }
    }

    /// The same device with `behaviour` (CiA 402 by default).
    pub fn with_behaviour(mut self, behaviour: Behaviour) -> DeviceMap {
        self.behaviour = behaviour;
        self
    }

    fn role_of(&self, slot: usize) -> Option<Role> {
        self.roles.iter().find(|(i, _)| *i == slot).map(|(_, r)| *r)
    }

    /// Publishes the plant's feedback into the published roles.
    pub(crate) fn publish(&mut self, fb: &Feedback, watchdog_s: f64) {
        self.heartbeat = self.heartbeat.wrapping_add(1);
        for k in 0..self.roles.len() {
            let (i, role) = self.roles[k];
            let value = match role {
                Role::Enable => f64::from(u8::from(fb.enabled)),
                Role::Mode | Role::ModeDisplay => self.modes.encode(fb.mode),
                Role::PositionFeedback => fb.position_rad,
                Role::VelocityFeedback => fb.velocity_rad_s,
                Role::TorqueFeedback => fb.motor_torque_nm,
                Role::MeasuredTorque => fb.sensor_torque_nm - self.tare_nm,
                Role::FaultCode => f64::from(fb.fault.map_or(0, |c| c.code())),
                Role::Heartbeat => f64::from(self.heartbeat),
                Role::WatchdogTimeout => watchdog_s,
                Role::MaxTorque => fb.max_torque_nm,
                Role::Decimals => f64::from(EMULATED_DECIMALS),
                Role::Temperature => fb.temperature_c,
                Role::Status if self.sensor => {
                    let overload = (fb.sensor_torque_nm - self.tare_nm).abs() > SENSOR_RANGE_NM;
                    f64::from(1 | (u16::from(overload) << 1))
                }
                Role::Status => f64::from(self.statusword(fb)),
                Role::ControlWord
                | Role::SpeedCommand
                | Role::TorqueCommand
                | Role::PositionCommand
                | Role::FaultReset
                | Role::Tare => continue,
            };
            self.image.publish(i, value);
        }
    }

    fn statusword(&self, fb: &Feedback) -> u16 {
        if let Behaviour::Profile {
            ready,
            enabled,
            fault,
            ..
        } = &self.behaviour
        {
            let mut word = 0;
            if fb.fault.is_none()
                && let Some(b) = ready
            {
                word = b.set(word);
            }
            if let Some(b) = enabled {
                word = if fb.enabled {
                    b.set(word)
                } else {
                    b.clear(word)
                };
            }
            if let Some(b) = fault {
                word = if fb.fault.is_some() {
                    b.set(word)
                } else {
                    b.clear(word)
                };
            }
            return word;
        }
        use statusword::*;
        if fb.fault.is_some() {
            return FAULT | REMOTE;
        }
        let base = if fb.enabled {
            READY | SWITCHED_ON | OPERATION_ENABLED | VOLTAGE_ENABLED | QUICK_STOP
        } else {
            match self.power {
                PowerState::SwitchOnDisabled => SWITCH_ON_DISABLED,
                PowerState::ReadyToSwitchOn => READY | VOLTAGE_ENABLED | QUICK_STOP,
                PowerState::SwitchedOn => READY | SWITCHED_ON | VOLTAGE_ENABLED | QUICK_STOP,
            }
        };
        let reached = match fb.mode {
            Mode::Torque => true,
            Mode::Velocity => {
                (fb.velocity_rad_s - fb.setpoint).abs() <= 0.01 + 0.01 * fb.setpoint.abs()
            }
            Mode::Position => (fb.position_rad - fb.setpoint).abs() <= 1e-3,
        };
        base | REMOTE
            | if fb.enabled && reached {
                TARGET_REACHED
            } else {
                0
            }
    }

    /// Serves one request against the image and the plant.
    pub(crate) fn serve(
        &mut self,
        req: &Request<'_>,
        sim: &mut Sim,
    ) -> Result<Response, ExceptionCode> {
        let refused = |r: Refusal| match r {
            Refusal::Address => ExceptionCode::IllegalDataAddress,
            Refusal::Value => ExceptionCode::IllegalDataValue,
        };
        match req {
            Request::ReadHoldingRegisters(a, n) => self
                .image
                .read(Table::Holding, *a, *n)
                .map(Response::ReadHoldingRegisters)
                .map_err(refused),
            Request::ReadInputRegisters(a, n) => self
                .image
                .read(Table::Input, *a, *n)
                .map(Response::ReadInputRegisters)
                .map_err(refused),
            Request::WriteSingleRegister(a, w) => {
                self.write(*a, &[*w], sim).map_err(refused)?;
                Ok(Response::WriteSingleRegister(*a, *w))
            }
            Request::WriteMultipleRegisters(a, words) => {
                self.write(*a, words, sim).map_err(refused)?;
                Ok(Response::WriteMultipleRegisters(*a, words.len() as u16))
            }
            Request::ReadWriteMultipleRegisters(ra, n, wa, words) => {
                // FC23: the write happens before the read (Modbus spec 6.17).
                self.write(*wa, words, sim).map_err(refused)?;
                let w = sim.params.watchdog_s;
                self.publish(&sim.feedback(), w);
                self.image
                    .read(Table::Holding, *ra, *n)
                    .map(Response::ReadWriteMultipleRegisters)
                    .map_err(refused)
            }
            _ => Err(ExceptionCode::IllegalFunction),
        }
    }

    fn write(&mut self, address: u16, words: &[u16], sim: &mut Sim) -> Result<(), Refusal> {
        let touched = self.image.write(address, words)?;
        for i in touched {
            let Some(value) = self.image.value(i) else {
                continue;
            };
            if let Behaviour::Profile { writes, .. } = &self.behaviour
                && let Some((_, _, a)) = writes
                    .iter()
                    .find(|(slot, v, _)| *slot == i && (v - value).abs() < 0.5)
            {
                sim.apply(*a);
                continue;
            }
            let action = match self.role_of(i) {
                Some(Role::Enable) => Some(if value != 0.0 {
                    Action::Enable
                } else {
                    Action::Disable
                }),
                Some(Role::ControlWord) if self.behaviour == Behaviour::Cia402 => {
                    self.controlword(value as u16, sim)
                }
                Some(Role::Mode) => match self.modes.decode(value) {
                    Some(m) => Some(Action::SetMode(m)),
                    None => return Err(Refusal::Value),
                },
                Some(Role::WatchdogTimeout) => Some(Action::SetWatchdog(value)),
                Some(Role::MaxTorque) => Some(Action::SetMaxTorque(value)),
                Some(Role::SpeedCommand) => Some(Action::Velocity(value)),
                Some(Role::TorqueCommand) => Some(Action::Torque(value)),
                Some(Role::PositionCommand) => Some(Action::Position(value)),
                Some(Role::FaultReset) => (value != 0.0).then_some(Action::ClearFault),
                Some(Role::Tare) => {
                    if value != 0.0 {
                        self.tare_nm = sim.feedback().sensor_torque_nm;
                    }
                    None
                }
                _ => None,
            };
            if let Some(a) = action {
                sim.apply(a);
            }
        }
        // Any valid write re-arms the watchdog (the drive's profile says so).
        if !self.sensor {
            sim.apply(Action::Heartbeat);
        }
        Ok(())
    }

    /// The CiA 402 state machine (IEC 61800-7-201), reduced to what a bench needs.
    fn controlword(&mut self, cw: u16, sim: &mut Sim) -> Option<Action> {
        let rising_reset = cw & 0x0080 != 0 && self.last_controlword & 0x0080 == 0;
        self.last_controlword = cw;
        if rising_reset {
            self.power = PowerState::SwitchOnDisabled;
            return Some(Action::ClearFault);
        }
        if sim.feedback().fault.is_some() || cw & 0x0080 != 0 {
            return None;
        }
        let enabled = sim.feedback().enabled;
        if cw & 0x0002 == 0 || cw & 0x0006 == 0x0002 {
            // Disable voltage, or quick stop.
            self.power = PowerState::SwitchOnDisabled;
            return Some(Action::Disable);
        }
        match cw & 0x000F {
            0x06 | 0x0E => {
                self.power = PowerState::ReadyToSwitchOn;
                Some(Action::Disable)
            }
            0x07 if self.power != PowerState::SwitchOnDisabled || enabled => {
                self.power = PowerState::SwitchedOn;
                Some(Action::Disable)
            }
            0x0F if self.power != PowerState::SwitchOnDisabled || enabled => {
                self.power = PowerState::SwitchedOn;
                Some(Action::Enable)
            }
            _ => None,
        }
    }
}
