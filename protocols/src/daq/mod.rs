//! Data-acquisition devices (LabJack T-series): the DAQ profile kind, the stream's wire format
//! and a client that speaks both command-response Modbus TCP and the hardware-timed stream.
//!
//! `profiles/labjack-t7.toml → DaqProfile → DaqClient (AIN, counter, DAC, calibration)
//! → DaqStream (packets → ScanBatch, StreamTracker, StreamFault)`

mod client;
mod drain;
mod profile;
mod safety;
mod stream;

pub use client::{AinConfig, DaqClient, DaqStream, ScanBatch, StreamConfig};
pub use profile::{
    AinSpec, CalibrationSpec, DacSpec, DaqDevice, DaqProfile, DaqRegister, DaqTransport, DaqType,
    QuadratureSpec, REQUIRED, StreamSpec, StreamStatusCodes,
};
pub use safety::{DriveOutputs, OutputsRead};
pub use stream::{
    AinCalibration, HEADER_BYTES, STREAM_FUNCTION, StreamFault, StreamPacket, StreamStatus,
    StreamTracker,
};
