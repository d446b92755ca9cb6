//! Delimited text as Excel, LabVIEW and MATLAB's `writetable` write it: a UTF-8 byte order
//! mark or not, comma, semicolon or tab delimiters (sniffed from the header line), quoted
//! fields, a header row, an optional units row (`s,m,N` or `[s],[m],[N]`), units in the header
//! (`x [m]`), `#` comment lines, CRLF or LF. With a semicolon or tab delimiter a decimal comma
//! (`0,001`) is read as a decimal point. Read with the `csv` crate one record at a time: the
//! file is never held whole. Line numbers in messages are counted here, as an editor shows
//! them (the `csv` crate's own count skips comment lines and lags on CRLF).

use super::header::header_unit;
use super::{At, ImportError, RowFn, Table, UnitClaim};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::rc::Rc;

/// Bytes buffered before the parser (and the most the delimiter sniffer looks at).
const BUFFER: usize = 64 << 10;

/// Bytes the `csv` reader buffers.
const CSV_BUFFER: usize = 256 << 10;

/// The newlines read ahead of the parser: the line of any later record start.
#[derive(Debug, Default)]
struct Lines {
    /// Offsets of the newlines not yet passed, ascending.
    ahead: VecDeque<u64>,
    /// Newlines before the first of `ahead`.
    passed: u64,
    /// Bytes read so far.
    read: u64,
}

impl Lines {
    /// The 1-based line of the byte at `offset` (offsets only grow from call to call).
    fn line_at(&mut self, offset: u64) -> u64 {
        while self.ahead.front().is_some_and(|&nl| nl < offset) {
            self.ahead.pop_front();
            self.passed += 1;
        }
        self.passed + 1
    }
}

/// The input, noting where its newlines are.
struct Counting<R> {
    inner: R,
    lines: Rc<RefCell<Lines>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut lines = self.lines.borrow_mut();
        let at = lines.read;
        lines
            .ahead
            .extend(memchr::memchr_iter(b'\n', &buf[..n]).map(|i| at + i as u64));
        lines.read += n as u64;
        Ok(n)
    }
}

/// The delimiters sniffed, in order of preference on a tie.
const DELIMITERS: [u8; 3] = [b',', b';', b'\t'];

/// A CSV file being read.
pub(crate) struct CsvTable<R: Read> {
    reader: csv::Reader<BufReader<Counting<R>>>,
    lines: Rc<RefCell<Lines>>,
    /// Bytes before what the `csv` reader sees (a byte order mark).
    skipped: u64,
    names: Vec<String>,
    delimiter: u8,
    units_row: Option<(u64, csv::ByteRecord)>,
    /// The first data record and its line, read while looking for a units row.
    first: Option<(u64, csv::ByteRecord)>,
}

/// The delimiter of the first line of `head` that is not empty or a comment: the most frequent
/// of comma, semicolon and tab outside quotes (`None` when there is none).
pub(crate) fn sniff_delimiter(head: &[u8]) -> Option<u8> {
    let line = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.iter().all(u8::is_ascii_whitespace) && !l.starts_with(b"#"))?;
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for &b in line {
        if b == b'"' {
            quoted = !quoted;
        } else if !quoted && let Some(k) = DELIMITERS.iter().position(|&d| d == b) {
            counts[k] += 1;
        }
    }
    let best = (0..3).max_by_key(|&k| (counts[k], std::cmp::Reverse(k)))?;
    (counts[best] > 0).then_some(DELIMITERS[best])
}

/// Parses a field as a number (`decimal_comma`: `1,5` is 1.5); `None` if it is not one.
fn number(field: &[u8], decimal_comma: bool) -> Option<f64> {
    if decimal_comma && field.contains(&b',') {
        let fixed: Vec<u8> = field
            .iter()
            .map(|&b| if b == b',' { b'.' } else { b })
            .collect();
        return std::str::from_utf8(&fixed).ok()?.parse().ok();
    }
    std::str::from_utf8(field).ok()?.parse().ok()
}

fn data(message: String) -> ImportError {
    ImportError::Data {
        file: String::new(),
        message,
    }
}

/// A `csv` error as an import error, on `line`.
fn csv_error(e: csv::Error, file: &str, header_len: usize, line: u64) -> ImportError {
    match e.into_kind() {
        csv::ErrorKind::Io(error) => ImportError::Io {
            file: file.to_string(),
            error,
        },
        csv::ErrorKind::UnequalLengths { len, .. } => data(format!(
            "line {line} has {len} fields, the header {header_len}"
        )),
        other => data(format!("line {line}: {other:?}")),
    }
}

impl<R: Read> CsvTable<R> {
    /// Opens the text in `input` (named `file` in messages): strips a byte order mark, sniffs
    /// the delimiter, reads the header and looks for a units row.
    pub(crate) fn open(input: R, file: &str) -> Result<CsvTable<R>, ImportError> {
        let lines = Rc::new(RefCell::new(Lines::default()));
        let counting = Counting {
            inner: input,
            lines: lines.clone(),
        };
        let mut buf = BufReader::with_capacity(BUFFER, counting);
        let io = |error| ImportError::Io {
            file: file.to_string(),
            error,
        };
        let head = buf.fill_buf().map_err(io)?;
        let bom = head.starts_with(b"\xEF\xBB\xBF");
        if bom {
            buf.consume(3);
        }
        let head = buf.fill_buf().map_err(io)?;
        let delimiter = sniff_delimiter(head).ok_or_else(|| {
            data("line 1: no header with comma, semicolon or tab delimited column names".into())
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(true)
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .buffer_capacity(CSV_BUFFER)
            .from_reader(buf);
        let header = reader
            .byte_headers()
            .map_err(|e| csv_error(e, file, 0, 1))?;
        let names: Vec<String> = header
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .collect();
        let mut table = CsvTable {
            reader,
            lines,
            skipped: if bom { 3 } else { 0 },
            names,
            delimiter,
            units_row: None,
            first: None,
        };
        table.units_row_or_data(file)?;
        Ok(table)
    }

    /// Reads the record after the header: a units row when no field is a number and one is
    /// not empty, else the first data record.
    fn units_row_or_data(&mut self, file: &str) -> Result<(), ImportError> {
        let mut rec = csv::ByteRecord::new();
        let more = self
            .reader
            .read_byte_record(&mut rec)
            .map_err(|e| self.error(e, file))?;
        if !more {
            return Ok(());
        }
        let decimal_comma = self.delimiter != b',';
        let numeric = rec.iter().any(|f| number(f, decimal_comma).is_some());
        let blank = rec.iter().all(<[u8]>::is_empty);
        let line = self.line_of_last();
        if numeric || blank {
            self.first = Some((line, rec));
        } else {
            self.units_row = Some((line, rec));
        }
        Ok(())
    }

    /// A `csv` error met reading the record after the last one read.
    fn error(&self, e: csv::Error, file: &str) -> ImportError {
        csv_error(e, file, self.names.len(), self.line_of_last())
    }

    /// The line of the record just read: that of its last byte (its end is exact where its
    /// start is not: the parser starts a record on the previous one's line feed, or on the
    /// comment lines before it).
    fn line_of_last(&self) -> u64 {
        let end = self.reader.position().byte() + self.skipped;
        self.lines.borrow_mut().line_at(end.saturating_sub(1))
    }

    fn value(
        &self,
        rec: &csv::ByteRecord,
        at: At,
        col: usize,
        decimal_comma: bool,
    ) -> Result<f64, ImportError> {
        let field = rec.get(col).unwrap_or_default();
        number(field, decimal_comma).ok_or_else(|| {
            let what = if field.is_empty() {
                "empty field".to_string()
            } else {
                format!("'{}' is not a number", String::from_utf8_lossy(field))
            };
            data(format!("{at}, column '{}': {what}", self.names[col]))
        })
    }
}

impl<R: Read> Table for CsvTable<R> {
    fn names(&self) -> &[String] {
        &self.names
    }

    fn units(&self) -> Vec<UnitClaim> {
        let mut out = Vec::new();
        for (column, name) in self.names.iter().enumerate() {
            if let Some((_, unit)) = header_unit(name) {
                out.push(UnitClaim {
                    column,
                    unit: unit.to_string(),
                    place: "line 1 (the header)".into(),
                });
            }
        }
        if let Some((line, rec)) = &self.units_row {
            for (column, field) in rec.iter().enumerate() {
                let text = String::from_utf8_lossy(field);
                let unit = text
                    .trim()
                    .trim_start_matches(['[', '('])
                    .trim_end_matches([']', ')'])
                    .trim();
                if unit.is_empty() || unit == "-" {
                    continue;
                }
                out.retain(|c| c.column != column);
                out.push(UnitClaim {
                    column,
                    unit: unit.to_string(),
                    place: format!("line {line} (the units row)"),
                });
            }
        }
        out
    }

    fn details(&self) -> serde_json::Value {
        let delimiter = match self.delimiter {
            b',' => "comma",
            b';' => "semicolon",
            _ => "tab",
        };
        serde_json::json!({
            "delimiter": delimiter,
            "decimal": if self.delimiter == b',' { "point" } else { "point or comma" },
            "units_row": self.units_row.as_ref().map(|(line, _)| line),
        })
    }

    fn read(&mut self, picks: &[usize], row: &mut RowFn<'_>) -> Result<(), ImportError> {
        let decimal_comma = self.delimiter != b',';
        let mut values = vec![0.0; picks.len()];
        let mut first = self.first.take();
        let mut rec = csv::ByteRecord::new();
        loop {
            let line = match first.take() {
                Some((line, r)) => {
                    rec = r;
                    line
                }
                None => {
                    let more = self
                        .reader
                        .read_byte_record(&mut rec)
                        .map_err(|e| self.error(e, ""))?;
                    if !more {
                        return Ok(());
                    }
                    self.line_of_last()
                }
            };
            let at = At::Line(line);
            for (v, &col) in values.iter_mut().zip(picks) {
                *v = self.value(&rec, at, col, decimal_comma)?;
            }
            row(at, &values)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> CsvTable<&[u8]> {
        CsvTable::open(text.as_bytes(), "t.csv").unwrap()
    }

    fn rows(t: &mut CsvTable<&[u8]>, picks: &[usize]) -> Result<Vec<(At, Vec<f64>)>, String> {
        let mut out = Vec::new();
        t.read(picks, &mut |at, v| {
            out.push((at, v.to_vec()));
            Ok(())
        })
        .map_err(|e| match e {
            ImportError::Data { message, .. } => message,
            e => e.to_string(),
        })?;
        Ok(out)
    }

    #[test]
    fn delimiters_are_sniffed_outside_quotes() {
        assert_eq!(sniff_delimiter(b"t,x,u\n1,2,3"), Some(b','));
        assert_eq!(sniff_delimiter(b"# comment, here\nt;x;u\r\n"), Some(b';'));
        assert_eq!(sniff_delimiter(b"\"a,b\"\tx\tu\n"), Some(b'\t'));
        assert_eq!(sniff_delimiter(b"time\n1\n"), None);
    }

    #[test]
    fn excel_semicolons_a_bom_quotes_crlf_and_a_units_row() {
        let text = "\u{feff}\"Time (s)\";\"Position; measured\";Force\r\n\
                    [s];[m];N\r\n0,000;1,5e-3;2\r\n0,001;\"1,6e-3\";-2,5\r\n";
        let mut t = table(text);
        assert_eq!(t.names(), ["Time (s)", "Position; measured", "Force"]);
        let units = t.units();
        let stated: Vec<(usize, &str, &str)> = units
            .iter()
            .map(|c| (c.column, c.unit.as_str(), c.place.as_str()))
            .collect();
        assert_eq!(
            stated,
            [
                (0, "s", "line 2 (the units row)"),
                (1, "m", "line 2 (the units row)"),
                (2, "N", "line 2 (the units row)"),
            ]
        );
        let got = rows(&mut t, &[0, 1, 2]).unwrap();
        assert_eq!(got[0], (At::Line(3), vec![0.0, 1.5e-3, 2.0]));
        assert_eq!(got[1], (At::Line(4), vec![0.001, 1.6e-3, -2.5]));
        assert_eq!(t.details()["delimiter"], "semicolon");
    }

    #[test]
    fn tabs_header_units_comments_and_no_units_row() {
        let text = "# exported by a logger\nt [s]\tx [rad]\n0\t1\n# pause\n0.5\t2\n";
        let mut t = table(text);
        assert_eq!(t.units()[1].unit, "rad");
        assert_eq!(t.units()[1].place, "line 1 (the header)");
        let got = rows(&mut t, &[1, 0]).unwrap();
        assert_eq!(
            got,
            [(At::Line(3), vec![1.0, 0.0]), (At::Line(5), vec![2.0, 0.5])]
        );
    }

    #[test]
    fn bad_fields_name_their_line_and_column() {
        let mut t = table("t,x\n0,1\n0.1,abc\n");
        assert_eq!(
            rows(&mut t, &[0, 1]).unwrap_err(),
            "line 3, column 'x': 'abc' is not a number"
        );
        let mut t = table("t,x\n0,1\n0.1,\n");
        assert_eq!(
            rows(&mut t, &[0, 1]).unwrap_err(),
            "line 3, column 'x': empty field"
        );
        let mut t = table("t,x\n0,1\n0.1,2,3\n");
        assert_eq!(
            rows(&mut t, &[0, 1]).unwrap_err(),
            "line 3 has 3 fields, the header 2"
        );
        // A comma-delimited file has no decimal comma: "1,5" would be two fields.
        let mut t = table("t;x\n0;1.5\n");
        assert_eq!(rows(&mut t, &[1]).unwrap()[0].1, [1.5]);
        assert!(matches!(
            CsvTable::open("just one column\n1\n".as_bytes(), "a.csv"),
            Err(ImportError::Data { .. })
        ));
    }
}
