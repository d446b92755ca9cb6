//! Read planning: poll groups and the contiguous reads that cover a set of signals.

use super::{Profile, Signal, Table};

/// A set of signals read together at a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PollGroup {
    /// Name.
    pub name: String,
    /// Rate, Hz.
    pub rate_hz: f64,
    /// Registers of gap that may be read over to merge two signals into one request.
    pub merge_gap: u16,
}

/// A contiguous read covering one or more signals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBlock {
    /// Table.
    pub table: Table,
    /// First address.
    pub start: u16,
    /// Number of registers or coils.
    pub count: u16,
    /// Indices into [`Profile::signals`] of the signals inside.
    pub signals: Vec<usize>,
}

impl ReadBlock {
    /// The registers of `signal` within a reply `data` to this block.
    pub fn slice<'a>(&self, signal: &Signal, data: &'a [u16]) -> Option<&'a [u16]> {
        let from = usize::from(signal.address.checked_sub(self.start)?);
        data.get(from..from + usize::from(signal.registers()))
    }
}

impl Profile {
    /// Groups `signals` (indices) into contiguous reads per table, merging neighbours closer
    /// than `merge_gap` registers and never exceeding `max_read_registers`.
    pub fn plan_reads(&self, signals: &[usize], merge_gap: u16) -> Vec<ReadBlock> {
        let mut idx: Vec<usize> = signals.to_vec();
        idx.sort_by_key(|&i| (self.signals[i].table, self.signals[i].address, i));
        idx.dedup();
        let max = u32::from(self.transport.max_read_registers);
        let mut blocks: Vec<ReadBlock> = Vec::new();
        for i in idx {
            let s = &self.signals[i];
            let end = u32::from(s.address) + u32::from(s.registers());
            let max_here = if s.table.is_bits() { 2000 } else { max };
            if let Some(b) = blocks.last_mut() {
                let b_end = u32::from(b.start) + u32::from(b.count);
                if b.table == s.table
                    && u32::from(s.address) <= b_end + u32::from(merge_gap)
                    && end.max(b_end) - u32::from(b.start) <= max_here
                {
                    b.count = (end.max(b_end) - u32::from(b.start)) as u16;
                    b.signals.push(i);
                    continue;
                }
            }
            blocks.push(ReadBlock {
                table: s.table,
                start: s.address,
                count: s.registers(),
                signals: vec![i],
            });
        }
        blocks
    }

    /// Read plan of a poll group (`None` if there is no such group).
    pub fn poll_plan(&self, group: &str) -> Option<Vec<ReadBlock>> {
        let g = self.poll_groups.iter().find(|g| g.name == group)?;
        let members: Vec<usize> = (0..self.signals.len())
            .filter(|&i| self.signals[i].poll.as_deref() == Some(group))
            .collect();
        Some(self.plan_reads(&members, g.merge_gap))
    }

    /// Read plan of every readable signal (contiguous signals merged, no gaps read over).
    pub fn readable_plan(&self) -> Vec<ReadBlock> {
        let all: Vec<usize> = (0..self.signals.len())
            .filter(|&i| self.signals[i].access.readable())
            .collect();
        self.plan_reads(&all, 0)
    }

    /// The range of addresses the profile's signals cover in `table` (first..end), if any: what
    /// a device serving this map answers without an illegal-address exception.
    pub fn extent(&self, table: Table) -> Option<std::ops::Range<u32>> {
        let mut it = self.signals.iter().filter(|s| s.table == table);
        let first = it.next()?;
        let mut lo = u32::from(first.address);
        let mut hi = lo + u32::from(first.registers());
        for s in it {
            lo = lo.min(u32::from(s.address));
            hi = hi.max(u32::from(s.address) + u32::from(s.registers()));
        }
        Some(lo..hi)
    }
}
