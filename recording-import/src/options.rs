//! What an import is asked for: the format, which file column is which sample column, the
//! scales, the geometry, the run's name and bench; parsed from the CLI flags or the query
//! parameters of `POST /api/runs/import` (the same names and syntax).

use super::ImportError;
use bench_daemon::config::Geometry;
use std::path::Path;

/// A recording's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Delimited text: comma, semicolon or tab, a header row, an optional units row.
    Csv,
    /// MATLAB level 5 MAT-file (`save`'s default, compressed or not).
    Mat,
    /// Apache Parquet.
    Parquet,
}

impl Format {
    /// `csv`, `mat` or `parquet`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Mat => "mat",
            Format::Parquet => "parquet",
        }
    }

    /// Parses a `--format` value.
    pub fn parse(text: &str) -> Result<Format, ImportError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "mat" => Ok(Format::Mat),
            "parquet" => Ok(Format::Parquet),
            _ => Err(ImportError::option(
                "format",
                format!("format '{text}' is not csv, mat or parquet"),
            )),
        }
    }

    /// The format a file name's extension names (`.csv`, `.tsv`, `.txt`, `.mat`, `.parquet`,
    /// `.pq`), if any.
    pub fn from_name(name: &str) -> Option<Format> {
        let ext = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" | "tsv" | "txt" => Some(Format::Csv),
            "mat" => Some(Format::Mat),
            "parquet" | "pq" => Some(Format::Parquet),
            _ => None,
        }
    }

    /// The format a file's first bytes show: Parquet's `PAR1` magic or a level 5 MAT-file's
    /// text header.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        if head.starts_with(b"PAR1") {
            Some(Format::Parquet)
        } else if head.starts_with(b"MATLAB") {
            Some(Format::Mat)
        } else {
            None
        }
    }
}

/// The sample columns a recording can fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Time \[s\] (required).
    T,
    /// Position \[rad or m\].
    X,
    /// Velocity \[rad/s or m/s\].
    V,
    /// The applied torque or force (stored as the drive torque).
    U,
    /// The measured friction torque or force (stored as the sensor torque).
    Friction,
}

impl Role {
    /// Every role, in sample order.
    pub const ALL: [Role; 5] = [Role::T, Role::X, Role::V, Role::U, Role::Friction];

    /// `t`, `x`, `v`, `u` or `friction`.
    pub fn name(self) -> &'static str {
        match self {
            Role::T => "t",
            Role::X => "x",
            Role::V => "v",
            Role::U => "u",
            Role::Friction => "friction",
        }
    }

    /// The role named `text`.
    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == text)
    }

    /// Its index in [`Role::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The SI unit it is stored in on a bench of geometry `g`.
    pub fn unit(self, g: Geometry) -> String {
        match self {
            Role::T => "s".into(),
            Role::X => g.position().into(),
            Role::V => format!("{}/s", g.position()),
            Role::U | Role::Friction => g.force().into(),
        }
    }
}

/// An import's options, checked on their own (against the file: [`ImportOptions::mapping`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportOptions {
    /// `--format`; `None`: from the file name's extension, else its first bytes.
    pub format: Option<Format>,
    /// `--columns`: role → file column; `None`: the columns named `t`, `x`, `v`, `u`,
    /// `friction` that the file has.
    pub columns: Option<Vec<(Role, String)>>,
    /// `--scale`: role → factor applied to the column's values as read.
    pub scales: Vec<(Role, f64)>,
    /// `--geometry`; `None`: what the file's units say, else rotary.
    pub geometry: Option<Geometry>,
    /// `--name`; `None`: the file's name.
    pub name: Option<String>,
    /// `--bench`: the bench the recording was made on (`bench_id`); `None`: none.
    pub bench: Option<String>,
}

/// The role a key of `--columns` or `--scale` names, or an error listing the known ones.
fn role_of(option: &'static str, key: &str) -> Result<Role, ImportError> {
    Role::parse(key.trim()).ok_or_else(|| {
        ImportError::option(
            option,
            format!("unknown {option} key '{key}' (known: t, x, v, u, friction)"),
        )
    })
}

impl ImportOptions {
    /// Parses the options as given on the command line or in a query (`scales`: each
    /// `--scale` value, which may itself hold several `NAME=FACTOR` separated by commas).
    pub fn parse(
        format: Option<&str>,
        columns: Option<&str>,
        scales: &[String],
        geometry: Option<&str>,
        name: Option<&str>,
        bench: Option<&str>,
    ) -> Result<ImportOptions, ImportError> {
        let format = format.map(Format::parse).transpose()?;
        let columns = columns.map(parse_columns).transpose()?;
        let mut parsed: Vec<(Role, f64)> = Vec::new();
        for item in scales.iter().flat_map(|s| s.split(',')) {
            let (role, factor) = parse_scale(item)?;
            if parsed.iter().any(|(r, _)| *r == role) {
                return Err(ImportError::option(
                    "scale",
                    format!("scale for '{}' given twice", role.name()),
                ));
            }
            parsed.push((role, factor));
        }
        let geometry = match geometry.map(|g| g.trim().to_ascii_lowercase()) {
            None => None,
            Some(g) if g == "rotary" => Some(Geometry::Rotary),
            Some(g) if g == "linear" => Some(Geometry::Linear),
            Some(g) => {
                return Err(ImportError::option(
                    "geometry",
                    format!("geometry '{g}' is not rotary or linear"),
                ));
            }
        };
        let name = match name {
            Some(n) if n.trim().is_empty() => {
                return Err(ImportError::option(
                    "name",
                    "the run name must not be empty",
                ));
            }
            Some(n) if n.chars().count() > 200 => {
                return Err(ImportError::option(
                    "name",
                    "the run name is longer than 200 characters",
                ));
            }
            n => n.map(|n| n.trim().to_string()),
        };
        if let Some(b) = bench {
            bench_daemon::config::check_bench_id(b)
                .map_err(|rule| ImportError::option("bench", format!("bench '{b}' {rule}")))?;
        }
        Ok(ImportOptions {
            format,
            columns,
            scales: parsed,
            geometry,
            name,
            bench: bench.map(str::to_string),
        })
    }

    /// Which file column (index into `names`) each role reads, checked against the file:
    /// every named column exists (once), `t` is mapped, and every scale's column is mapped.
    pub fn mapping(&self, names: &[String]) -> Result<Mapping, ImportError> {
        let mut cols: [Option<usize>; 5] = [None; 5];
        match &self.columns {
            Some(given) => {
                for (role, col) in given {
                    cols[role.index()] = Some(find_column(names, col)?);
                }
            }
            None => {
                for role in Role::ALL {
                    cols[role.index()] = find_column(names, role.name()).ok();
                }
            }
        }
        if cols[Role::T.index()].is_none() {
            let how = match &self.columns {
                Some(_) => "--columns must map t (time), e.g. t=time",
                None => "no column is named t: map the time column with --columns t=COLUMN",
            };
            return Err(ImportError::option(
                "columns",
                format!("{how} (the file has: {})", list(names)),
            ));
        }
        if cols[1..].iter().all(Option::is_none) {
            return Err(ImportError::option(
                "columns",
                format!(
                    "map at least one of x, v, u, friction besides t, e.g. --columns t=time,x=position (the file has: {})",
                    list(names)
                ),
            ));
        }
        for (role, _) in &self.scales {
            if cols[role.index()].is_none() {
                return Err(ImportError::option(
                    "scale",
                    format!("scale for '{}', which no column is mapped to", role.name()),
                ));
            }
        }
        let mut scales = [1.0; 5];
        for (role, f) in &self.scales {
            scales[role.index()] = *f;
        }
        Ok(Mapping { cols, scales })
    }
}

/// Which file column each role reads and the factor applied to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mapping {
    /// File column index per role (in [`Role::ALL`] order); `None`: not in the file.
    pub cols: [Option<usize>; 5],
    /// Factor per role (1 without `--scale`).
    pub scales: [f64; 5],
}

impl Mapping {
    /// The mapped roles with their file columns, in role order.
    pub fn mapped(&self) -> Vec<(Role, usize)> {
        Role::ALL
            .into_iter()
            .filter_map(|r| self.cols[r.index()].map(|c| (r, c)))
            .collect()
    }
}

/// `--columns t=COL,x=COL,...`.
fn parse_columns(text: &str) -> Result<Vec<(Role, String)>, ImportError> {
    let mut out: Vec<(Role, String)> = Vec::new();
    for item in text.split(',').filter(|s| !s.trim().is_empty()) {
        let (key, col) = item.split_once('=').ok_or_else(|| {
            ImportError::option(
                "columns",
                format!("'{item}' is not KEY=COLUMN (e.g. --columns t=time,x=position)"),
            )
        })?;
        let role = role_of("columns", key)?;
        let col = col.trim();
        if col.is_empty() {
            return Err(ImportError::option(
                "columns",
                format!("'{}=' names no column", role.name()),
            ));
        }
        if out.iter().any(|(r, _)| *r == role) {
            return Err(ImportError::option(
                "columns",
                format!("'{}' is mapped twice", role.name()),
            ));
        }
        out.push((role, col.to_string()));
    }
    if out.is_empty() {
        return Err(ImportError::option(
            "columns",
            "--columns is empty (e.g. --columns t=time,x=position)",
        ));
    }
    Ok(out)
}

/// One `NAME=FACTOR` of `--scale`.
fn parse_scale(item: &str) -> Result<(Role, f64), ImportError> {
    let (key, value) = item.split_once('=').ok_or_else(|| {
        ImportError::option(
            "scale",
            format!("'{item}' is not NAME=FACTOR (e.g. --scale u=35.15)"),
        )
    })?;
    let role = role_of("scale", key)?;
    let factor: f64 = value.trim().parse().map_err(|_| {
        ImportError::option(
            "scale",
            format!("scale for '{}': '{value}' is not a number", role.name()),
        )
    })?;
    if !factor.is_finite() || factor == 0.0 {
        return Err(ImportError::option(
            "scale",
            format!(
                "scale for '{}' ({value}) must be a finite, non-zero number",
                role.name()
            ),
        ));
    }
    Ok((role, factor))
}

/// The index of column `name` in `names`: an exact match, else a match of the name without a
/// bracketed unit (`x [m]` answers to `x`); refused when missing or ambiguous.
pub(crate) fn find_column(names: &[String], name: &str) -> Result<usize, ImportError> {
    let exact: Vec<usize> = (0..names.len()).filter(|&i| names[i] == name).collect();
    let found = if exact.is_empty() {
        (0..names.len())
            .filter(|&i| super::header::bare_name(&names[i]) == name)
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [i] => Ok(*i),
        [] => Err(ImportError::option(
            "columns",
            format!("no column '{name}' in the file (it has: {})", list(names)),
        )),
        _ => Err(ImportError::option(
            "columns",
            format!("column '{name}' appears {} times in the file", found.len()),
        )),
    }
}

/// Column names for a message (the first 20).
pub(crate) fn list(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(20).map(String::as_str).collect();
    let more = names.len().saturating_sub(20);
    if more > 0 {
        format!("{}, ... and {more} more", shown.join(", "))
    } else if shown.is_empty() {
        "no columns".into()
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn parse(columns: Option<&str>, scales: &[&str]) -> Result<ImportOptions, ImportError> {
        let scales: Vec<String> = scales.iter().map(|s| s.to_string()).collect();
        ImportOptions::parse(None, columns, &scales, None, None, None)
    }

    #[test]
    fn columns_and_scales_map_roles_to_file_columns() {
        let o = parse(Some("t=time, x=qm ,u=vir"), &["u=35.1507"]).unwrap();
        let m = o.mapping(&names(&["qg", "qm", "time", "vir"])).unwrap();
        assert_eq!(m.cols, [Some(2), Some(1), None, Some(3), None]);
        assert_eq!(m.scales, [1.0, 1.0, 1.0, 35.1507, 1.0]);
        // Without --columns, the columns named like the roles (a bracketed unit allowed).
        let o = parse(None, &[]).unwrap();
        let m = o
            .mapping(&names(&["t [s]", "x", "friction", "other"]))
            .unwrap();
        assert_eq!(m.cols, [Some(0), Some(1), None, None, Some(2)]);
        assert_eq!(
            m.mapped(),
            [(Role::T, 0), (Role::X, 1), (Role::Friction, 2)]
        );
    }

    #[test]
    fn bad_options_are_refused_naming_the_option_and_value() {
        let msg = |r: Result<ImportOptions, ImportError>| match r {
            Err(ImportError::Option { option, message }) => format!("{option}: {message}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            msg(parse(Some("t=time,y=pos"), &[])),
            "columns: unknown columns key 'y' (known: t, x, v, u, friction)"
        );
        assert_eq!(
            msg(parse(Some("t=a,t=b"), &[])),
            "columns: 't' is mapped twice"
        );
        assert_eq!(
            msg(parse(Some("t"), &[])),
            "columns: 't' is not KEY=COLUMN (e.g. --columns t=time,x=position)"
        );
        assert_eq!(
            msg(parse(None, &["u=abc"])),
            "scale: scale for 'u': 'abc' is not a number"
        );
        assert_eq!(
            msg(parse(None, &["u=0"])),
            "scale: scale for 'u' (0) must be a finite, non-zero number"
        );
        assert_eq!(
            msg(parse(None, &["u=2,u=3"])),
            "scale: scale for 'u' given twice"
        );
        assert_eq!(
            msg(ImportOptions::parse(
                Some("xls"),
                None,
                &[],
                None,
                None,
                None
            )),
            "format: format 'xls' is not csv, mat or parquet"
        );
        assert_eq!(
            msg(ImportOptions::parse(
                None,
                None,
                &[],
                Some("polar"),
                None,
                None
            )),
            "geometry: geometry 'polar' is not rotary or linear"
        );
        let map_err = |o: ImportOptions, n: &[&str]| match o.mapping(&names(n)) {
            Err(ImportError::Option { option, message }) => format!("{option}: {message}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            map_err(parse(Some("t=t,x=pos"), &[]).unwrap(), &["t", "x"]),
            "columns: no column 'pos' in the file (it has: t, x)"
        );
        assert_eq!(
            map_err(parse(Some("t=t,x=x"), &["v=2"]).unwrap(), &["t", "x"]),
            "scale: scale for 'v', which no column is mapped to"
        );
        assert_eq!(
            map_err(parse(None, &[]).unwrap(), &["time", "x"]),
            "columns: no column is named t: map the time column with --columns t=COLUMN (the file has: time, x)"
        );
        assert_eq!(
            map_err(parse(Some("t=a"), &[]).unwrap(), &["a", "b"]),
            "columns: map at least one of x, v, u, friction besides t, e.g. --columns t=time,x=position (the file has: a, b)"
        );
        assert_eq!(
            map_err(parse(Some("t=a,x=b"), &[]).unwrap(), &["a", "b", "a"]),
            "columns: column 'a' appears 2 times in the file"
        );
    }

    #[test]
    fn formats_come_from_the_extension_or_the_first_bytes() {
        assert_eq!(Format::from_name("DATA_EMPS.mat"), Some(Format::Mat));
        assert_eq!(Format::from_name("joint.CSV"), Some(Format::Csv));
        assert_eq!(Format::from_name("a.parquet"), Some(Format::Parquet));
        assert_eq!(Format::from_name("recording"), None);
        assert_eq!(Format::sniff(b"PAR1\x15\x04"), Some(Format::Parquet));
        assert_eq!(
            Format::sniff(b"MATLAB 5.0 MAT-file, Platform"),
            Some(Format::Mat)
        );
        assert_eq!(Format::sniff(b"t,x\n"), None);
    }
}
