//! The register operations a device client calls: read, write (with its echo checked) and
//! FC23's write-then-read, each one request through `Link::transact`.

use std::borrow::Cow;

use tokio_modbus::{Request, Response};

use super::Link;
use super::reply::bug;
use crate::error::{Error, RegisterRef};
use crate::profile::Table;

impl Link {
    /// Reads `count` registers (or coils, as 0/1) from `table` at `address` of `unit`.
    pub async fn read(
        &mut self,
        unit: u8,
        table: Table,
        address: u16,
        count: u16,
    ) -> Result<Vec<u16>, Error> {
        let what = RegisterRef {
            table,
            address,
            count,
            signal: None,
        };
        let req = match table {
            Table::Coil => Request::ReadCoils(address, count),
            Table::DiscreteInput => Request::ReadDiscreteInputs(address, count),
            Table::Input => Request::ReadInputRegisters(address, count),
            Table::Holding => Request::ReadHoldingRegisters(address, count),
        };
        match self.transact(unit, req, &what).await? {
            Response::ReadCoils(bits) | Response::ReadDiscreteInputs(bits) => Ok(bits
                .into_iter()
                .take(usize::from(count))
                .map(u16::from)
                .collect()),
            Response::ReadInputRegisters(w) | Response::ReadHoldingRegisters(w) => Ok(w),
            other => Err(bug(other)),
        }
    }

    /// Writes registers (FC06 for one, FC16 for several) or coils (FC05 / FC15, non-zero =
    /// on) and checks the echo.
    pub async fn write(
        &mut self,
        unit: u8,
        table: Table,
        address: u16,
        data: &[u16],
    ) -> Result<(), Error> {
        let what = RegisterRef {
            table,
            address,
            count: data.len() as u16,
            signal: None,
        };
        let req = match (table, data) {
            (Table::Holding, [one]) => Request::WriteSingleRegister(address, *one),
            (Table::Holding, _) => {
                Request::WriteMultipleRegisters(address, Cow::Owned(data.to_vec()))
            }
            (Table::Coil, [one]) => Request::WriteSingleCoil(address, *one != 0),
            (Table::Coil, _) => Request::WriteMultipleCoils(
                address,
                Cow::Owned(data.iter().map(|w| *w != 0).collect()),
            ),
            (t, _) => {
                return Err(Error::Protocol {
                    context: format!("write {what}"),
                    reason: format!("a {t} cannot be written"),
                });
            }
        };
        self.transact(unit, req, &what).await.map(|_| ())
    }

    /// FC23: writes `data` at `write_address` and reads `read_count` holding registers at
    /// `read_address` in one transaction (the write happens first).
    pub async fn read_write(
        &mut self,
        unit: u8,
        read_address: u16,
        read_count: u16,
        write_address: u16,
        data: &[u16],
    ) -> Result<Vec<u16>, Error> {
        let what = RegisterRef {
            table: Table::Holding,
            address: read_address,
            count: read_count,
            signal: None,
        };
        let req = Request::ReadWriteMultipleRegisters(
            read_address,
            read_count,
            write_address,
            Cow::Owned(data.to_vec()),
        );
        match self.transact(unit, req, &what).await? {
            Response::ReadWriteMultipleRegisters(w) => Ok(w),
            other => Err(bug(other)),
        }
    }
}
