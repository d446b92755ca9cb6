//! A device's register image: the words a Modbus master reads and writes, laid out by a
//! profile's signals. The physics publishes feedback signals into it; writes land in it and are
//! decoded back into signal values.

use std::collections::BTreeMap;

/// Register table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// Holding registers (FC03 read, FC06/16/23 write).
    Holding,
    /// Input registers (FC04 read, read-only).
    Input,
}

/// Converts an SI value to registers (`None` if it does not fit the type).
pub type EncodeFn = Box<dyn Fn(f64) -> Option<Vec<u16>> + Send + Sync>;
/// Converts registers to an SI value (`None` if they are not a valid value).
pub type DecodeFn = Box<dyn Fn(&[u16]) -> Option<f64> + Send + Sync>;

/// One signal of the image, as a profile lays it out.
pub struct Slot {
    /// Signal name in the profile.
    pub name: String,
    /// Register table.
    pub table: Table,
    /// First register (PDU address).
    pub address: u16,
    /// Registers it spans.
    pub count: u16,
    /// A master may read it.
    pub readable: bool,
    /// A master may write it.
    pub writable: bool,
    /// SI value → registers.
    pub encode: EncodeFn,
    /// Registers → SI value.
    pub decode: DecodeFn,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("name", &self.name)
            .field("table", &self.table)
            .field("address", &self.address)
            .field("count", &self.count)
            .field("readable", &self.readable)
            .field("writable", &self.writable)
            .finish()
    }
}

/// Why a request was refused (becomes a Modbus exception).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A register outside every signal, or a signal cut in half: IllegalDataAddress.
    Address,
    /// A value the signal cannot take, or a write to a read-only signal: IllegalDataValue.
    Value,
}

/// The words of one device.
#[derive(Debug, Default)]
pub struct Image {
    slots: Vec<Slot>,
    words: BTreeMap<(Table, u16), u16>,
    /// (table, address) → slot index, for every register of every slot.
    owner: BTreeMap<(Table, u16), usize>,
    /// Per table, the block `[first, end)` the device answers for.
    blocks: BTreeMap<Table, (u32, u32)>,
}

impl Image {
    /// An image holding `slots`, every word zero.
    pub fn new(slots: Vec<Slot>) -> Image {
        let mut words = BTreeMap::new();
        let mut owner = BTreeMap::new();
        let mut blocks: BTreeMap<Table, (u32, u32)> = BTreeMap::new();
        for (i, s) in slots.iter().enumerate() {
            let (a, e) = (
                u32::from(s.address),
                u32::from(s.address) + u32::from(s.count),
            );
            let b = blocks.entry(s.table).or_insert((a, e));
            *b = (b.0.min(a), b.1.max(e));
            for k in 0..s.count {
                let key = (s.table, s.address.wrapping_add(k));
                words.insert(key, 0);
                owner.insert(key, i);
            }
        }
        Image {
            slots,
            words,
            owner,
            blocks,
        }
    }

    /// Index of the slot named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.name == name)
    }

    /// The slot at `i`.
    pub fn slot(&self, i: usize) -> &Slot {
        &self.slots[i]
    }

    /// Publishes an SI value into slot `i` (clamped to what the type can hold is the encoder's
    /// job; a value it refuses leaves the words as they were).
    pub fn publish(&mut self, i: usize, value: f64) {
        let s = &self.slots[i];
        if let Some(regs) = (s.encode)(value) {
            for (k, w) in regs.into_iter().enumerate() {
                self.words
                    .insert((s.table, s.address.wrapping_add(k as u16)), w);
            }
        }
    }

    /// The SI value slot `i` holds now.
    pub fn value(&self, i: usize) -> Option<f64> {
        let s = &self.slots[i];
        let regs: Vec<u16> = (0..s.count)
            .map(|k| self.words[&(s.table, s.address.wrapping_add(k))])
            .collect();
        (s.decode)(&regs)
    }

    fn inside(&self, table: Table, address: u16, count: usize) -> bool {
        self.blocks.get(&table).is_some_and(|&(a, e)| {
            u32::from(address) >= a && u32::from(address) + count as u32 <= e
        })
    }

    /// Reads `count` words from `address`. The range must lie inside the device's block;
    /// unmapped and write-only words inside it read as 0.
    pub fn read(&self, table: Table, address: u16, count: u16) -> Result<Vec<u16>, Refusal> {
        if count == 0 || count > 125 {
            return Err(Refusal::Value);
        }
        if !self.inside(table, address, count.into()) {
            return Err(Refusal::Address);
        }
        Ok((0..count)
            .map(|k| {
                let key = (table, address + k);
                match self.owner.get(&key) {
                    Some(&i) if self.slots[i].readable => self.words[&key],
                    _ => 0,
                }
            })
            .collect())
    }

    /// Writes `words` from `address` into holding registers inside the device's block; every
    /// signal touched must be writable and covered whole, and its new value must decode;
    /// unmapped words are ignored. Returns the indices of the slots written, in address order.
    /// Nothing is written if anything is refused.
    pub fn write(&mut self, address: u16, words: &[u16]) -> Result<Vec<usize>, Refusal> {
        if words.is_empty() || words.len() > 123 {
            return Err(Refusal::Value);
        }
        if !self.inside(Table::Holding, address, words.len()) {
            return Err(Refusal::Address);
        }
        let end = address as u32 + words.len() as u32;
        let mut touched: Vec<usize> = Vec::new();
        for k in 0..words.len() as u16 {
            if let Some(&i) = self.owner.get(&(Table::Holding, address + k))
                && touched.last() != Some(&i)
            {
                touched.push(i);
            }
        }
        for &i in &touched {
            let s = &self.slots[i];
            if (s.address as u32) < address as u32 || s.address as u32 + s.count as u32 > end {
                return Err(Refusal::Address);
            }
            if !s.writable {
                return Err(Refusal::Address);
            }
            let from = (s.address - address) as usize;
            if (s.decode)(&words[from..from + s.count as usize]).is_none() {
                return Err(Refusal::Value);
            }
        }
        for (k, &w) in words.iter().enumerate() {
            let key = (Table::Holding, address + k as u16);
            if let Some(slot) = self.words.get_mut(&key) {
                *slot = w;
            }
        }
        Ok(touched)
    }
}
