//! The four Modbus data tables, as the wire, the profiles and the errors name them.

use std::fmt;

/// The four Modbus data tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Read/write bits (FC01, FC05, FC15).
    Coil,
    /// Read-only bits (FC02).
    DiscreteInput,
    /// Read-only registers (FC04).
    Input,
    /// Read/write registers (FC03, FC06, FC16, FC23).
    Holding,
}

impl Table {
    /// The profile spelling.
    pub fn name(self) -> &'static str {
        match self {
            Table::Coil => "coil",
            Table::DiscreteInput => "discrete",
            Table::Input => "input",
            Table::Holding => "holding",
        }
    }

    /// True for the bit tables (coils, discrete inputs).
    pub fn is_bits(self) -> bool {
        matches!(self, Table::Coil | Table::DiscreteInput)
    }

    pub(crate) fn parse(s: &str) -> Option<Table> {
        [
            Table::Coil,
            Table::DiscreteInput,
            Table::Input,
            Table::Holding,
        ]
        .into_iter()
        .find(|t| t.name() == s)
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Table::Coil => "coil",
            Table::DiscreteInput => "discrete input",
            Table::Input => "input register",
            Table::Holding => "holding register",
        })
    }
}
