//! The servo-drive client: enable, disable, set mode, command, read feedback, clear fault, in
//! roles and SI units (rad, rad/s, N m). One method is one request, except the sequences
//! (enable, disable, fault reset, mode changes by sequence), which are several by definition.
//! No retries: the control loop owns the retry budget and the safe-state reaction.

use std::sync::Arc;
use std::time::Duration;

use crate::device::{DeviceIo, SignalValue};
use crate::error::Error;
use crate::profile::{DeviceKind, Mode, Profile, ReadBlock, Role};
use crate::transport::SharedLink;

/// The feedback roles [`Drive::read_feedback`] reads.
const FEEDBACK_ROLES: [Role; 7] = [
    Role::Status,
    Role::ModeDisplay,
    Role::FaultCode,
    Role::Heartbeat,
    Role::PositionFeedback,
    Role::VelocityFeedback,
    Role::TorqueFeedback,
];

/// One feedback sample. Fields the profile has no signal for are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct DriveFeedback {
    /// Position, rad.
    pub position_rad: Option<f64>,
    /// Velocity, rad/s.
    pub velocity_rad_s: Option<f64>,
    /// Motor torque, N m.
    pub torque_nm: Option<f64>,
    /// Raw status word.
    pub status: Option<u64>,
    /// Status matches the profile's `enabled` pattern.
    pub enabled: Option<bool>,
    /// Status matches the profile's `fault` pattern (or the fault code is non-zero).
    pub fault: Option<bool>,
    /// Fault / alarm code (0 = none).
    pub fault_code: Option<u64>,
    /// Active mode as the drive reports it.
    pub mode: Option<Mode>,
    /// The drive's publication counter.
    pub heartbeat: Option<u64>,
}

/// A servo drive described by a profile, on a (shared) link.
#[derive(Debug, Clone)]
pub struct Drive {
    io: DeviceIo,
    feedback_plan: Vec<ReadBlock>,
    mode: Option<Mode>,
}

impl Drive {
    /// Builds the client. The profile must describe a drive.
    pub fn new(profile: Arc<Profile>, link: SharedLink) -> Result<Drive, Error> {
        if profile.device.kind != DeviceKind::Drive {
            return Err(profile.unsupported("the Drive client (it is not a drive)".into()));
        }
        let io = DeviceIo::new(profile, link);
        let feedback_plan = io.plan(&io.role_indices(&FEEDBACK_ROLES));
        Ok(Drive {
            io,
            feedback_plan,
            mode: None,
        })
    }

    /// Uses another unit id than the profile's.
    pub fn with_unit(mut self, unit: u8) -> Drive {
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

    /// The mode last set through this client.
    pub fn mode(&self) -> Option<Mode> {
        self.mode
    }

    /// Enables the power stage: the `enable` sequence, or writes 1 to the `enable` role.
    pub async fn enable(&mut self) -> Result<(), Error> {
        if self.profile().sequence("enable").is_some() {
            self.io.run_sequence("enable").await
        } else {
            self.write_role(Role::Enable, 1.0).await
        }
    }

    /// Removes torque: the `disable` sequence, or writes 0 to the `enable` role.
    ///
    /// The goal is "no torque", so a sequence that ends in another non-enabled state than the
    /// one it expects (a faulted drive never reaches "ready to switch on") still succeeds when
    /// the status then reads not enabled.
    pub async fn disable(&mut self) -> Result<(), Error> {
        if self.profile().sequence("disable").is_none() {
            return self.write_role(Role::Enable, 0.0).await;
        }
        match self.io.run_sequence("disable").await {
            Err(e @ Error::Sequence { .. }) => match self.read_feedback().await {
                Ok(fb) if fb.enabled == Some(false) => Ok(()),
                _ => Err(e),
            },
            other => other,
        }
    }

    /// Clears a latched fault: the `fault_reset` sequence.
    pub async fn clear_fault(&mut self) -> Result<(), Error> {
        self.io.run_sequence("fault_reset").await
    }

    /// Selects torque, velocity or position mode: the `mode_<name>` sequence if the profile
    /// has one, else writes the `[modes]` value to the `mode` role.
    pub async fn set_mode(&mut self, mode: Mode) -> Result<(), Error> {
        let seq = format!("mode_{mode}");
        if self.profile().sequence(&seq).is_some() {
            self.io.run_sequence(&seq).await?;
        } else {
            let value = *self
                .profile()
                .modes
                .get(&mode)
                .ok_or_else(|| self.profile().unsupported(format!("{mode} mode")))?;
            let sig = self.profile().require_role(Role::Mode)?;
            let regs = sig.encode_raw(sig.si_to_raw(value as f64 * sig.unit.factor)?)?;
            self.io.write_registers(sig, &regs).await?;
        }
        self.mode = Some(mode);
        Ok(())
    }

    fn command_registers(
        &self,
        mode: Mode,
        value: f64,
    ) -> Result<(&crate::Signal, Vec<u16>), Error> {
        let sig = self.profile().require_role(mode.command_role())?;
        let regs = sig.encode(value)?;
        Ok((sig, regs))
    }

    fn current_mode(&self) -> Result<Mode, Error> {
        self.mode.ok_or_else(|| {
            self.profile().unsupported(
                "a command before set_mode (the mode decides the command signal)".into(),
            )
        })
    }

    /// Writes the command of the current mode (N m, rad/s or rad), limits checked: one request
    /// (plus the profile's `after_command` sequence, if it has one).
    pub async fn command(&mut self, value: f64) -> Result<(), Error> {
        let mode = self.current_mode()?;
        self.command_in(mode, value).await
    }

    /// Writes the command signal of `mode` whatever the current mode.
    pub async fn command_in(&mut self, mode: Mode, value: f64) -> Result<(), Error> {
        let (sig, regs) = self.command_registers(mode, value)?;
        self.io.write_registers(sig, &regs).await?;
        if self.profile().sequence("after_command").is_some() {
            self.io.run_sequence("after_command").await?;
        }
        Ok(())
    }

    /// Writes the command and reads the feedback: one FC23 transaction when the profile allows
    /// it and the feedback is one holding-register block, else a write then the reads.
    pub async fn command_and_read(&mut self, value: f64) -> Result<DriveFeedback, Error> {
        let mode = self.current_mode()?;
        let fc23 = self.feedback_plan.len() == 1
            && self.io.fc23_block(&self.feedback_plan[0])
            && self.profile().sequence("after_command").is_none();
        if !fc23 {
            self.command_in(mode, value).await?;
            return self.read_feedback().await;
        }
        let (sig, regs) = self.command_registers(mode, value)?;
        let b = &self.feedback_plan[0];
        let data = self
            .io
            .link()
            .lock()
            .await
            .read_write(self.io.unit(), b.start, b.count, sig.address, &regs)
            .await?;
        let values = self.io.decode_blocks(&self.feedback_plan, &[data])?;
        Ok(self.feedback_from(&values))
    }

    /// Reads position, velocity, torque, status, fault code and mode (one request per read
    /// block; one in total for the shipped simulated drive).
    pub async fn read_feedback(&mut self) -> Result<DriveFeedback, Error> {
        let values = self.io.read_blocks(&self.feedback_plan).await?;
        Ok(self.feedback_from(&values))
    }

    fn feedback_from(&self, values: &[SignalValue]) -> DriveFeedback {
        let p = self.profile();
        let mut fb = DriveFeedback::default();
        for v in values {
            let bits = v.raw.as_bits();
            match v.role {
                Some(Role::PositionFeedback) => fb.position_rad = Some(v.value),
                Some(Role::VelocityFeedback) => fb.velocity_rad_s = Some(v.value),
                Some(Role::TorqueFeedback) => fb.torque_nm = Some(v.value),
                Some(Role::Status) => {
                    fb.status = bits;
                    if let Some(b) = bits {
                        fb.enabled = p.status_pattern("enabled").map(|s| s.matches(b));
                        fb.fault = p.status_pattern("fault").map(|s| s.matches(b));
                    }
                }
                Some(Role::FaultCode) => fb.fault_code = bits,
                Some(Role::ModeDisplay) => {
                    fb.mode = p.mode_from_value(v.raw.as_f64() as i64);
                }
                Some(Role::Heartbeat) => fb.heartbeat = bits,
                _ => {}
            }
        }
        if fb.fault.is_none() {
            fb.fault = fb.fault_code.map(|c| c != 0);
        }
        fb
    }

    /// Sets the drive's communication watchdog (role `watchdog_timeout`).
    pub async fn set_watchdog(&mut self, timeout: Duration) -> Result<(), Error> {
        self.write_role(Role::WatchdogTimeout, timeout.as_secs_f64())
            .await
    }

    /// Reads the drive's communication watchdog back \[s\] (role `watchdog_timeout`).
    pub async fn read_watchdog(&mut self) -> Result<f64, Error> {
        let sig = self.profile().require_role(Role::WatchdogTimeout)?;
        Ok(self.io.read_signal(&sig.name).await?.value)
    }

    /// Sets the drive's maximum torque in every mode (role `max_torque`, CiA 402 6072h).
    pub async fn set_max_torque(&mut self, torque_nm: f64) -> Result<(), Error> {
        self.write_role(Role::MaxTorque, torque_nm).await
    }

    async fn write_role(&self, role: Role, value: f64) -> Result<(), Error> {
        let sig = self.profile().require_role(role)?;
        let regs = sig.encode(value)?;
        self.io.write_registers(sig, &regs).await
    }
}
