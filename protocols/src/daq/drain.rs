//! [`DaqStream::drain`]: the stream read without waiting, for a control loop that must not
//! block on the DAQ. Whatever bytes the socket holds are taken; every whole packet among them
//! is checked and accounted as [`DaqStream::next`] does; a partial packet waits for the next
//! call. A stall is judged on the loop's calls: no packet for the stall limit.

use super::client::{DaqStream, ScanBatch};
use super::stream::{HEADER_BYTES, StreamFault, StreamPacket};
use std::time::Instant;

impl DaqStream {
    /// Appends every packet that has arrived to `out`, without waiting. A closed socket, a
    /// malformed or failed packet, an overrun, or no packet for longer than the stall limit
    /// is a [`StreamFault`].
    pub fn drain(&mut self, out: &mut Vec<ScanBatch>) -> Result<(), StreamFault> {
        self.take_bytes()?;
        let mut got = false;
        while let Some(packet) = self.split_packet()? {
            out.push(self.batch(packet)?);
            got = true;
        }
        let now = Instant::now();
        if got {
            self.last_packet = now;
            return Ok(());
        }
        let waited = now.duration_since(self.last_packet);
        if waited > self.stall {
            return Err(StreamFault::Stalled {
                waited_s: waited.as_secs_f64(),
                limit_s: self.stall.as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Moves what the socket holds into `pending`.
    fn take_bytes(&mut self) -> Result<(), StreamFault> {
        let mut buf = [0u8; 4096];
        loop {
            match self.socket.try_read(&mut buf) {
                Ok(0) => {
                    return Err(StreamFault::Malformed(
                        "stream socket closed by the device".into(),
                    ));
                }
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(StreamFault::Malformed(format!("stream socket: {e}"))),
            }
        }
    }

    /// The first whole packet of `pending`, removed from it.
    fn split_packet(&mut self) -> Result<Option<StreamPacket>, StreamFault> {
        let Some(head) = self.pending.get(..HEADER_BYTES) else {
            return Ok(None);
        };
        let header: [u8; HEADER_BYTES] = head.try_into().expect("BUG: header length");
        let n = StreamPacket::sample_count(&header).map_err(StreamFault::Malformed)?;
        let end = HEADER_BYTES + 2 * n;
        if self.pending.len() < end {
            return Ok(None);
        }
        let packet = StreamPacket::decode(&header, &self.pending[HEADER_BYTES..end])
            .map_err(StreamFault::Malformed)?;
        self.pending.drain(..end);
        Ok(Some(packet))
    }
}
