//! The units a recording states for its columns, checked against the bench geometry.
//!
//! A stored sample is SI in the bench's geometry: rotary `s, rad, rad/s, N m`, linear
//! `s, m, m/s, N`. A unit the file states (a units row, `x [m]` in the header, Parquet field
//! metadata) for a column imported without `--scale` must be that unit (spelling variants such
//! as `Nm`, `N.m` or `N·m` accepted); any other unit is refused unless `--scale` converts the
//! column, in which case it is kept in the provenance as the source unit. Without
//! `--geometry`, the stated units choose it (`m`, `m/s`, `N`: linear; `rad`, `rad/s`, `N m`:
//! rotary); without either, it is rotary.

use super::options::{Mapping, Role};
use super::{ImportError, UnitClaim};
use bench_daemon::config::Geometry;

/// A unit with spaces, dots, middle dots and asterisks removed (`N·m` = `N m` = `Nm`).
fn canonical(unit: &str) -> String {
    unit.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '·' | '⋅' | '*' | '.'))
        .collect()
}

/// The geometry a stated SI unit of `role` belongs to, `Some(None)` for a unit every geometry
/// shares (seconds), `None` when it is not one of the stored units.
fn geometry_of(role: Role, unit: &str) -> Option<Option<Geometry>> {
    let u = canonical(unit);
    let is = |list: &[&str]| list.contains(&u.as_str());
    let (rotary, linear): (&[&str], &[&str]) = match role {
        Role::T => return is(&["s", "sec"]).then_some(None),
        Role::X => (&["rad"], &["m"]),
        Role::V => (&["rad/s", "rads^-1", "rads-1"], &["m/s", "ms^-1", "ms-1"]),
        Role::U | Role::Friction => (&["Nm"], &["N"]),
    };
    if is(rotary) {
        Some(Some(Geometry::Rotary))
    } else if is(linear) {
        Some(Some(Geometry::Linear))
    } else {
        None
    }
}

/// The geometry of the stored run and each mapped role's unit as the file states it.
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    /// The geometry.
    pub geometry: Geometry,
    /// Where it came from: `--geometry`, `the file's units` or `default`.
    pub geometry_source: &'static str,
    /// The stated unit of each mapped role that has one (`None` elsewhere).
    pub stated: [Option<String>; 5],
}

/// Checks the file's `claims` for the mapped columns against `geometry` (or chooses it from
/// them), refusing a contradiction with the line and column named.
pub(crate) fn resolve(
    claims: &[UnitClaim],
    names: &[String],
    map: &Mapping,
    geometry: Option<Geometry>,
) -> Result<Units, ImportError> {
    let mut stated: [Option<String>; 5] = Default::default();
    let mut checked: Vec<(Role, &UnitClaim, Option<Geometry>)> = Vec::new();
    for (role, col) in map.mapped() {
        let Some(claim) = claims.iter().find(|c| c.column == col) else {
            continue;
        };
        stated[role.index()] = Some(claim.unit.clone());
        let scaled = map.scales[role.index()] != 1.0;
        match geometry_of(role, &claim.unit) {
            Some(g) => checked.push((role, claim, g)),
            None if scaled => {}
            None => {
                return Err(data_error(format!(
                    "{}, column '{}' ({}): unit '{}' is not {} (give --scale {}=FACTOR to convert it)",
                    claim.place,
                    names[col],
                    role.name(),
                    claim.unit,
                    expected(role, geometry),
                    role.name()
                )));
            }
        }
    }
    let (geometry, source) = match geometry {
        Some(g) => (g, "--geometry"),
        None => match checked.iter().find_map(|(_, _, g)| *g) {
            Some(g) => (g, "the file's units"),
            None => (Geometry::Rotary, "default"),
        },
    };
    for (role, claim, g) in checked {
        if g.is_some_and(|g| g != geometry) && map.scales[role.index()] == 1.0 {
            let why = match source {
                "--geometry" => format!("contradicts --geometry {}", geometry.name()),
                _ => format!(
                    "contradicts the other columns' units ({} bench)",
                    geometry.name()
                ),
            };
            return Err(data_error(format!(
                "{}, column '{}' ({}): unit '{}' {why}, whose {} is in {}",
                claim.place,
                names[claim.column],
                role.name(),
                claim.unit,
                role.name(),
                role.unit(geometry)
            )));
        }
    }
    Ok(Units {
        geometry,
        geometry_source: source,
        stated,
    })
}

/// The units a role may be stated in, for a message.
fn expected(role: Role, geometry: Option<Geometry>) -> String {
    match geometry {
        Some(g) => role.unit(g),
        None if role == Role::T => "s".into(),
        None => format!(
            "{} or {}",
            role.unit(Geometry::Rotary),
            role.unit(Geometry::Linear)
        ),
    }
}

fn data_error(message: String) -> ImportError {
    ImportError::Data {
        file: String::new(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(column: usize, unit: &str) -> UnitClaim {
        UnitClaim {
            column,
            unit: unit.into(),
            place: "line 2".into(),
        }
    }

    fn map(scaled_u: bool) -> Mapping {
        Mapping {
            cols: [Some(0), Some(1), None, Some(2), None],
            scales: [1.0, 1.0, 1.0, if scaled_u { 35.0 } else { 1.0 }, 1.0],
        }
    }

    fn names() -> Vec<String> {
        ["time", "pos", "force"].map(String::from).to_vec()
    }

    fn refusal(r: Result<Units, ImportError>) -> String {
        match r {
            Err(ImportError::Data { message, .. }) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stated_units_choose_the_geometry_or_must_agree_with_it() {
        let claims = [claim(0, "s"), claim(1, "m"), claim(2, "N")];
        let u = resolve(&claims, &names(), &map(false), None).unwrap();
        assert_eq!(
            (u.geometry, u.geometry_source),
            (Geometry::Linear, "the file's units")
        );
        assert_eq!(u.stated[1].as_deref(), Some("m"));
        let u = resolve(&[claim(2, "N·m")], &names(), &map(false), None).unwrap();
        assert_eq!(u.geometry, Geometry::Rotary);
        let u = resolve(&[], &names(), &map(false), None).unwrap();
        assert_eq!(
            (u.geometry, u.geometry_source),
            (Geometry::Rotary, "default")
        );
        assert_eq!(
            refusal(resolve(
                &claims,
                &names(),
                &map(false),
                Some(Geometry::Rotary)
            )),
            "line 2, column 'pos' (x): unit 'm' contradicts --geometry rotary, whose x is in rad"
        );
        assert_eq!(
            refusal(resolve(
                &[claim(1, "rad"), claim(2, "N")],
                &names(),
                &map(false),
                None
            )),
            "line 2, column 'force' (u): unit 'N' contradicts the other columns' units (rotary bench), whose u is in N m"
        );
    }

    #[test]
    fn other_units_need_a_scale() {
        let claims = [claim(0, "s"), claim(1, "m"), claim(2, "V")];
        assert_eq!(
            refusal(resolve(
                &claims,
                &names(),
                &map(false),
                Some(Geometry::Linear)
            )),
            "line 2, column 'force' (u): unit 'V' is not N (give --scale u=FACTOR to convert it)"
        );
        let u = resolve(&claims, &names(), &map(true), Some(Geometry::Linear)).unwrap();
        assert_eq!(u.stated[3].as_deref(), Some("V"));
        assert_eq!(
            refusal(resolve(&[claim(0, "ms")], &names(), &map(false), None)),
            "line 2, column 'time' (t): unit 'ms' is not s (give --scale t=FACTOR to convert it)"
        );
    }
}
