//! What every profile-driven client does: read signals (in merged blocks), write signals, and
//! run sequences. [`crate::Drive`] and [`crate::TorqueSensor`] are built on it; `bench probe`
//! uses it directly.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, RegisterRef};
use crate::profile::{Profile, RawValue, ReadBlock, Role, Signal, Step, Table};
use crate::transport::SharedLink;

/// One decoded signal value.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalValue {
    /// Index into [`Profile::signals`].
    pub index: usize,
    /// Signal name.
    pub name: String,
    /// Role, if any.
    pub role: Option<Role>,
    /// The value in SI units.
    pub value: f64,
    /// Its SI unit.
    pub unit: &'static str,
    /// The raw register value.
    pub raw: RawValue,
}

/// A profile bound to a unit on a link.
#[derive(Debug, Clone)]
pub struct DeviceIo {
    profile: Arc<Profile>,
    link: SharedLink,
    unit: u8,
}

fn named(e: Error, signal: &Signal) -> Error {
    match e {
        Error::Exception { code, register } => Error::Exception {
            code,
            register: RegisterRef {
                signal: register.signal.or_else(|| Some(signal.name.clone())),
                ..register
            },
        },
        other => other,
    }
}

impl DeviceIo {
    /// Binds `profile` to its own unit id on `link`.
    pub fn new(profile: Arc<Profile>, link: SharedLink) -> DeviceIo {
        let unit = profile.transport.unit_id;
        DeviceIo {
            profile,
            link,
            unit,
        }
    }

    /// Uses another unit id than the profile's.
    pub fn with_unit(mut self, unit: u8) -> DeviceIo {
        self.unit = unit;
        self
    }

    /// The profile.
    pub fn profile(&self) -> &Arc<Profile> {
        &self.profile
    }

    /// The link.
    pub fn link(&self) -> &SharedLink {
        &self.link
    }

    /// The unit id.
    pub fn unit(&self) -> u8 {
        self.unit
    }

    /// Reads one block: one request.
    pub async fn read_block(&self, block: &ReadBlock) -> Result<Vec<u16>, Error> {
        let r = self
            .link
            .lock()
            .await
            .read(self.unit, block.table, block.start, block.count)
            .await;
        match r {
            Err(e) if block.signals.len() == 1 => {
                Err(named(e, &self.profile.signals[block.signals[0]]))
            }
            other => other,
        }
    }

    /// Decodes the signals of `blocks` from their replies `data` (same order), resolving
    /// `scale_exp_from` decimals from signals in the same read.
    pub fn decode_blocks(
        &self,
        blocks: &[ReadBlock],
        data: &[Vec<u16>],
    ) -> Result<Vec<SignalValue>, Error> {
        let p = &self.profile;
        let mut raws: Vec<(usize, RawValue)> = Vec::new();
        for (b, d) in blocks.iter().zip(data) {
            for &i in &b.signals {
                let s = &p.signals[i];
                let regs = b.slice(s, d).ok_or_else(|| Error::Protocol {
                    context: format!("decode signal '{}'", s.name),
                    reason: format!("reply of {} registers does not cover it", d.len()),
                })?;
                raws.push((i, s.decode_raw(regs)?));
            }
        }
        let by_name: HashMap<&str, RawValue> = raws
            .iter()
            .map(|(i, r)| (p.signals[*i].name.as_str(), *r))
            .collect();
        Ok(raws
            .iter()
            .map(|&(i, raw)| {
                let s = &p.signals[i];
                let decimals = s
                    .scale_exp_from
                    .as_deref()
                    .and_then(|n| by_name.get(n))
                    .map(|r| r.as_f64() as i32)
                    .unwrap_or(0);
                SignalValue {
                    index: i,
                    name: s.name.clone(),
                    role: s.role,
                    value: s.raw_to_si(raw, decimals),
                    unit: s.si_unit(),
                    raw,
                }
            })
            .collect())
    }

    /// Reads `blocks` (one request each) and decodes every signal in them.
    pub async fn read_blocks(&self, blocks: &[ReadBlock]) -> Result<Vec<SignalValue>, Error> {
        let mut data = Vec::with_capacity(blocks.len());
        for b in blocks {
            data.push(self.read_block(b).await?);
        }
        self.decode_blocks(blocks, &data)
    }

    /// A read plan for `signals` (plus the decimals sources they need).
    pub fn plan(&self, signals: &[usize]) -> Vec<ReadBlock> {
        let p = &self.profile;
        let mut all: Vec<usize> = signals.to_vec();
        for &i in signals {
            if let Some(src) = &p.signals[i].scale_exp_from
                && let Some(j) = p.signal_index(src)
            {
                all.push(j);
            }
        }
        let gap = p.poll_groups.iter().map(|g| g.merge_gap).max().unwrap_or(0);
        p.plan_reads(&all, gap)
    }

    fn signal(&self, name: &str) -> Result<(usize, &Signal), Error> {
        let i = self
            .profile
            .signal_index(name)
            .ok_or_else(|| self.profile.unsupported(format!("signal '{name}'")))?;
        Ok((i, &self.profile.signals[i]))
    }

    /// Reads one signal (SI).
    pub async fn read_signal(&self, name: &str) -> Result<SignalValue, Error> {
        let (i, _) = self.signal(name)?;
        let blocks = self.plan(&[i]);
        let values = self.read_blocks(&blocks).await?;
        values
            .into_iter()
            .find(|v| v.index == i)
            .ok_or_else(|| Error::Protocol {
                context: format!("read signal '{name}'"),
                reason: "BUG: value missing from its own read plan".into(),
            })
    }

    /// Writes registers to a signal: one request.
    pub async fn write_registers(&self, signal: &Signal, regs: &[u16]) -> Result<(), Error> {
        if !signal.access.writable() {
            return Err(self
                .profile
                .unsupported(format!("writing read-only signal '{}'", signal.name)));
        }
        self.link
            .lock()
            .await
            .write(self.unit, signal.table, signal.address, regs)
            .await
            .map_err(|e| named(e, signal))
    }

    /// Writes an SI value to a signal (limits checked): one request.
    pub async fn write_signal(&self, name: &str, value: f64) -> Result<(), Error> {
        let (_, s) = self.signal(name)?;
        let regs = s.encode(value)?;
        self.write_registers(s, &regs).await
    }

    /// Runs the sequence called `name`: its writes, waits and expectations, in order.
    pub async fn run_sequence(&self, name: &str) -> Result<(), Error> {
        let seq = self
            .profile
            .sequence(name)
            .ok_or_else(|| self.profile.unsupported(format!("sequence '{name}'")))?
            .clone();
        for (k, step) in seq.steps.iter().enumerate() {
            let wrap = |e: Error| Error::Sequence {
                sequence: name.to_string(),
                step: k,
                reason: e.to_string(),
            };
            match step {
                Step::Write {
                    signal, registers, ..
                } => {
                    let (_, s) = self.signal(signal)?;
                    self.write_registers(s, registers).await.map_err(wrap)?;
                }
                Step::Wait(d) => tokio::time::sleep(*d).await,
                Step::Expect {
                    signal,
                    mask,
                    value,
                    timeout,
                } => {
                    let deadline = Instant::now() + *timeout;
                    loop {
                        let v = self.read_signal(signal).await.map_err(wrap)?;
                        let bits = v.raw.as_bits().unwrap_or(0);
                        if bits & mask == *value {
                            break;
                        }
                        if Instant::now() >= deadline {
                            return Err(Error::Sequence {
                                sequence: name.to_string(),
                                step: k,
                                reason: format!(
                                    "{signal} & 0x{mask:04X} = 0x{:04X}, expected 0x{value:04X} within {} ms (read 0x{bits:04X})",
                                    bits & mask,
                                    timeout.as_millis()
                                ),
                            });
                        }
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
            }
        }
        Ok(())
    }

    /// Indices of the readable signals with any of `roles`.
    pub fn role_indices(&self, roles: &[Role]) -> Vec<usize> {
        (0..self.profile.signals.len())
            .filter(|&i| {
                let s = &self.profile.signals[i];
                s.access.readable() && s.role.is_some_and(|r| roles.contains(&r))
            })
            .collect()
    }

    /// True when `block` is a holding-register read (FC23-capable).
    pub(crate) fn fc23_block(&self, block: &ReadBlock) -> bool {
        self.profile.transport.fc23 && block.table == Table::Holding
    }
}
