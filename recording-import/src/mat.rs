//! MATLAB level 5 MAT-files, as `save` writes them by default (`-v7`: each variable a
//! zlib-compressed data element) and `save -v6` or SciPy's `savemat` (uncompressed), in either
//! byte order. A column is a numeric variable holding a vector (`t`, `qm`) or one column of a
//! 2-D numeric matrix (`data:2`, 1-based). Variables are stored whole in the format, so the
//! mapped ones are read whole (and only those: the others are skipped without being
//! decompressed past their name). Version 7.3 files (HDF5) and version 4 files are refused
//! with what to do instead.
//!
//! Layout (the MathWorks "MAT-File Format" document): a 128-byte header (text, subsystem
//! offset, version 0x0100, endian indicator `IM`), then data elements of an 8-byte tag (type,
//! byte count) and their data, padded to 8 bytes; a 4-byte or shorter element may be packed
//! into its tag (type in the low 16 bits, count in the high). A variable is an `miMATRIX`
//! element of sub-elements (array flags with its class, dimensions, name, real part,
//! imaginary part), or an `miCOMPRESSED` element whose zlib stream holds one.

use super::{At, ImportError, RowFn, Table, UnitClaim};
use flate2::read::ZlibDecoder;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

// Data types of data elements.
const MI_INT8: u32 = 1;
const MI_UINT8: u32 = 2;
const MI_INT16: u32 = 3;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_SINGLE: u32 = 7;
const MI_DOUBLE: u32 = 9;
const MI_INT64: u32 = 12;
const MI_UINT64: u32 = 13;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;

/// Array classes 6 (double) to 15 (uint64) are numeric.
const NUMERIC_CLASSES: std::ops::RangeInclusive<u8> = 6..=15;

/// Names of the array classes 1..=15.
const CLASS_NAMES: [&str; 15] = [
    "cell", "struct", "object", "char", "sparse", "double", "single", "int8", "uint8", "int16",
    "uint16", "int32", "uint32", "int64", "uint64",
];

/// Largest number of values a mapped variable may hold (2^28: 2 GiB of doubles, 74 hours at
/// 1 kHz).
const MAX_ELEMENTS: u64 = 1 << 28;

/// Most bytes an array's flags, dimensions or name may take.
const HEADER_BYTES: u64 = 64 << 10;

/// One variable of the file.
#[derive(Clone, Debug, PartialEq)]
struct Var {
    name: String,
    class: u8,
    complex: bool,
    dims: Vec<u64>,
    /// Offset of its top-level element's tag.
    offset: u64,
}

impl Var {
    fn class_name(&self) -> &'static str {
        CLASS_NAMES
            .get(usize::from(self.class).wrapping_sub(1))
            .copied()
            .unwrap_or("unknown class")
    }

    /// Rows and columns of a 2-D array.
    fn shape(&self) -> Option<(u64, u64)> {
        match self.dims.as_slice() {
            [r, c] => Some((*r, *c)),
            _ => None,
        }
    }

    /// Why it cannot be a column, if it cannot.
    fn unusable(&self) -> Option<String> {
        let dims: Vec<String> = self.dims.iter().map(u64::to_string).collect();
        let what = format!("a {} {}", dims.join("×"), self.class_name());
        if !NUMERIC_CLASSES.contains(&self.class) {
            return Some(format!("{what} array, not numbers"));
        }
        if self.complex {
            return Some(format!("{what} complex array"));
        }
        match self.shape() {
            None => Some(format!("{what} array: not a vector or a 2-D matrix")),
            Some(_) => None,
        }
    }
}

/// A MAT-file being read.
pub(crate) struct MatTable {
    file: File,
    name: String,
    big_endian: bool,
    header: String,
    vars: Vec<Var>,
    /// Column names and what they read: (variable index, 1-based column or 0 for a vector).
    columns: Vec<(usize, u64)>,
    names: Vec<String>,
}

fn data(message: String) -> ImportError {
    ImportError::Data {
        file: String::new(),
        message,
    }
}

/// A format error at byte `at` of the file.
fn corrupt(at: u64, what: &str) -> ImportError {
    data(format!("byte {at}: {what} (not a valid level 5 MAT-file)"))
}

/// Reads data elements in one byte order.
struct Elements<R: Read> {
    r: R,
    big: bool,
}

impl<R: Read> Elements<R> {
    fn u32_of(&self, b: [u8; 4]) -> u32 {
        if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u32(&mut self) -> std::io::Result<u32> {
        let b = self.bytes()?;
        Ok(self.u32_of(b))
    }

    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut b = [0; N];
        self.r.read_exact(&mut b)?;
        Ok(b)
    }

    /// The next sub-element: its type and data (padding consumed), refused when it claims
    /// more than `cap` bytes. Its data is read as it comes, never allocated from the claim.
    fn element(&mut self, cap: u64) -> std::io::Result<(u32, Vec<u8>)> {
        let first = self.u32()?;
        if first >> 16 != 0 {
            // Small data element: up to 4 bytes packed into the tag.
            let (ty, n) = (first & 0xFFFF, (first >> 16) as usize);
            let packed: [u8; 4] = self.bytes()?;
            return Ok((ty, packed[..n.min(4)].to_vec()));
        }
        let n = u64::from(self.u32()?);
        if n > cap {
            return Err(std::io::Error::other(format!(
                "a sub-element of {n} bytes where at most {cap} fit"
            )));
        }
        let mut data = Vec::new();
        (&mut self.r).take(n).read_to_end(&mut data)?;
        if (data.len() as u64) < n {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let pad = (8 - n % 8) % 8;
        let mut skip = [0u8; 8];
        self.r.read_exact(&mut skip[..pad as usize])?;
        Ok((first, data))
    }

    /// The array flags, dimensions and name of a matrix whose tag was read.
    fn matrix_header(&mut self) -> std::io::Result<(u8, bool, Vec<u64>, String)> {
        let (_, flags) = self.element(HEADER_BYTES)?;
        let word = self.u32_of(
            flags
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .unwrap_or([0; 4]),
        );
        let (class, complex) = ((word & 0xFF) as u8, word & 0x0800 != 0);
        let (_, dims) = self.element(HEADER_BYTES)?;
        let dims = dims
            .chunks_exact(4)
            .map(|c| u64::from(self.u32_of([c[0], c[1], c[2], c[3]])))
            .collect();
        let (_, name) = self.element(HEADER_BYTES)?;
        Ok((
            class,
            complex,
            dims,
            String::from_utf8_lossy(&name).into_owned(),
        ))
    }
}

/// Numbers of data type `ty` in `bytes`, as f64.
fn numbers(ty: u32, bytes: &[u8], big: bool) -> Option<Vec<f64>> {
    macro_rules! conv {
        ($t:ty, $n:expr) => {
            bytes
                .chunks_exact($n)
                .map(|c| {
                    let a: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    (if big {
                        <$t>::from_be_bytes(a)
                    } else {
                        <$t>::from_le_bytes(a)
                    }) as f64
                })
                .collect()
        };
    }
    Some(match ty {
        MI_INT8 => conv!(i8, 1),
        MI_UINT8 => conv!(u8, 1),
        MI_INT16 => conv!(i16, 2),
        MI_UINT16 => conv!(u16, 2),
        MI_INT32 => conv!(i32, 4),
        MI_UINT32 => conv!(u32, 4),
        MI_SINGLE => conv!(f32, 4),
        MI_DOUBLE => conv!(f64, 8),
        MI_INT64 => conv!(i64, 8),
        MI_UINT64 => conv!(u64, 8),
        _ => return None,
    })
}

impl MatTable {
    /// Opens the file at `path` (named `name` in messages) and lists its variables.
    pub(crate) fn open(path: &std::path::Path, name: &str) -> Result<MatTable, ImportError> {
        let io = |error| ImportError::Io {
            file: name.to_string(),
            error,
        };
        let mut file = File::open(path).map_err(io)?;
        let mut head = [0u8; 128];
        file.read_exact(&mut head)
            .map_err(|_| data("shorter than the 128-byte MAT-file header".into()))?;
        let text = String::from_utf8_lossy(&head[..116])
            .trim_end_matches(['\0', ' '])
            .to_string();
        if text.starts_with("MATLAB 7.3") {
            return Err(data(
                "a MATLAB 7.3 MAT-file (HDF5) is not read: save it with `save(..., '-v7')` or export CSV".into(),
            ));
        }
        let big_endian = match &head[126..128] {
            b"IM" => false,
            b"MI" => true,
            _ => {
                return Err(data(
                    "no level 5 MAT-file header (a version 4 MAT-file, or not a MAT-file): save it with `save(..., '-v7')` or export CSV".into(),
                ));
            }
        };
        let version = if big_endian {
            u16::from_be_bytes([head[124], head[125]])
        } else {
            u16::from_le_bytes([head[124], head[125]])
        };
        if version != 0x0100 {
            return Err(data(format!(
                "MAT-file version {version:#06x}: only level 5 (0x0100) is read"
            )));
        }
        let vars = scan(&mut file, big_endian, name)?;
        let mut table = MatTable {
            file,
            name: name.to_string(),
            big_endian,
            header: text,
            vars,
            columns: Vec::new(),
            names: Vec::new(),
        };
        table.list_columns();
        Ok(table)
    }

    /// One column per vector, one per column of a 2-D matrix (`name:k`), one per other
    /// variable (refused when read, saying why).
    fn list_columns(&mut self) {
        for (i, v) in self.vars.iter().enumerate() {
            match v.shape() {
                Some((r, c)) if r > 1 && c > 1 && v.unusable().is_none() => {
                    for k in 1..=c {
                        self.columns.push((i, k));
                        self.names.push(format!("{}:{k}", v.name));
                    }
                }
                _ => {
                    self.columns.push((i, 0));
                    self.names.push(v.name.clone());
                }
            }
        }
    }

    /// The values of column `col` (an index into the names).
    fn load(&mut self, col: usize) -> Result<Vec<f64>, ImportError> {
        let (vi, k) = self.columns[col];
        let var = self.vars[vi].clone();
        if let Some(why) = var.unusable() {
            return Err(data(format!("variable '{}' is {why}", var.name)));
        }
        let (rows, cols) = var.shape().unwrap_or((0, 0));
        if rows.saturating_mul(cols) > MAX_ELEMENTS {
            return Err(data(format!(
                "variable '{}' holds {rows}×{cols} values, more than {MAX_ELEMENTS}",
                var.name
            )));
        }
        let io = |error| ImportError::Io {
            file: self.name.clone(),
            error,
        };
        self.file.seek(SeekFrom::Start(var.offset)).map_err(io)?;
        let mut top = Elements {
            r: BufReader::new(&mut self.file),
            big: self.big_endian,
        };
        let ty = top.u32().map_err(io)?;
        let n = u64::from(top.u32().map_err(io)?);
        let real = if ty == MI_COMPRESSED {
            let mut inner = Elements {
                r: BufReader::new(ZlibDecoder::new(top.r.take(n))),
                big: self.big_endian,
            };
            real_part(&mut inner, rows * cols * 8)
        } else {
            // The top-level tag was the matrix's own.
            top.matrix_header()
                .and_then(|_| top.element(rows * cols * 8))
        }
        .map_err(|e| corrupt(var.offset, &format!("variable '{}': {e}", var.name)))?;
        let values = numbers(real.0, &real.1, self.big_endian).ok_or_else(|| {
            corrupt(
                var.offset,
                &format!("variable '{}': data type {}", var.name, real.0),
            )
        })?;
        if values.len() as u64 != rows * cols {
            return Err(corrupt(
                var.offset,
                &format!(
                    "variable '{}' has {} values for {rows}×{cols}",
                    var.name,
                    values.len()
                ),
            ));
        }
        Ok(match k {
            0 => values,
            k => {
                // Column-major: column k is the k-th run of `rows` values.
                let start = ((k - 1) * rows) as usize;
                values[start..start + rows as usize].to_vec()
            }
        })
    }
}

/// Reads a matrix element's tag and header (the start of a compressed element's stream) and
/// returns its real part (type, bytes).
fn real_part<R: Read>(e: &mut Elements<R>, cap: u64) -> std::io::Result<(u32, Vec<u8>)> {
    let ty = e.u32()?;
    let _n = e.u32()?;
    if ty != MI_MATRIX {
        return Err(std::io::Error::other(format!(
            "a data element of type {ty} where a matrix was expected"
        )));
    }
    e.matrix_header()?;
    e.element(cap)
}

/// Lists the file's variables (from byte 128), reading past each one's header.
fn scan(file: &mut File, big: bool, name: &str) -> Result<Vec<Var>, ImportError> {
    let io = |error| ImportError::Io {
        file: name.to_string(),
        error,
    };
    let len = file.metadata().map_err(io)?.len();
    let mut vars = Vec::new();
    let mut pos = 128u64;
    while pos + 8 <= len {
        file.seek(SeekFrom::Start(pos)).map_err(io)?;
        let mut tag = Elements {
            r: BufReader::with_capacity(512, &mut *file),
            big,
        };
        let ty = tag.u32().map_err(io)?;
        let n = u64::from(tag.u32().map_err(io)?);
        if pos + 8 + n > len {
            return Err(corrupt(
                pos,
                &format!("a data element of {n} bytes runs past the end of the file"),
            ));
        }
        let header = match ty {
            MI_MATRIX if n > 0 => Some(tag.matrix_header()),
            MI_COMPRESSED => {
                let mut inner = Elements {
                    r: ZlibDecoder::new(tag.r.take(n)),
                    big,
                };
                Some(inner.bytes::<8>().and_then(|t| {
                    let inner_ty = inner.u32_of([t[0], t[1], t[2], t[3]]);
                    if inner_ty == MI_MATRIX {
                        inner.matrix_header()
                    } else {
                        Err(std::io::Error::other("not a matrix"))
                    }
                }))
            }
            _ => None,
        };
        if let Some(header) = header {
            let (class, complex, dims, var) =
                header.map_err(|e| corrupt(pos, &format!("variable header: {e}")))?;
            // MATLAB's subsystem data (function handles, objects) is an unnamed element.
            if !var.is_empty() {
                vars.push(Var {
                    name: var,
                    class,
                    complex,
                    dims,
                    offset: pos,
                });
            }
        }
        let padded = if ty == MI_COMPRESSED {
            n
        } else {
            n.div_ceil(8) * 8
        };
        pos += 8 + padded;
    }
    Ok(vars)
}

impl Table for MatTable {
    fn names(&self) -> &[String] {
        &self.names
    }

    fn units(&self) -> Vec<UnitClaim> {
        Vec::new()
    }

    fn details(&self) -> serde_json::Value {
        let vars: Vec<serde_json::Value> = self
            .vars
            .iter()
            .map(|v| serde_json::json!({"name": v.name, "class": v.class_name(), "dims": v.dims}))
            .collect();
        serde_json::json!({
            "header": self.header,
            "byte_order": if self.big_endian { "big-endian" } else { "little-endian" },
            "variables": vars,
        })
    }

    fn read(&mut self, picks: &[usize], row: &mut RowFn<'_>) -> Result<(), ImportError> {
        let mut cols = Vec::with_capacity(picks.len());
        for &p in picks {
            cols.push(self.load(p)?);
        }
        let n = cols.first().map_or(0, Vec::len);
        if let Some(k) = cols.iter().position(|c| c.len() != n) {
            return Err(data(format!(
                "'{}' has {} values and '{}' {}: the columns of a recording must be equally long",
                self.names[picks[0]],
                n,
                self.names[picks[k]],
                cols[k].len()
            )));
        }
        let mut values = vec![0.0; cols.len()];
        for i in 0..n {
            for (v, c) in values.iter_mut().zip(&cols) {
                *v = c[i];
            }
            row(At::Row(i as u64 + 1), &values)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "mat_tests.rs"]
mod tests;
