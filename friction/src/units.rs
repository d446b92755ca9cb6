//! Units of a bench's geometry. The registry documents every parameter in SI units written for a
//! linear bench (N, m, m/s, N s/m, N/m); a rotary bench measures torque and angle, so the same
//! dimensions read N m, rad, rad/s, N m s/rad, N m/rad. [`bench_unit`] maps a registry unit by
//! its dimension (force → torque, length → angle, mass → inertia); the numbers are unchanged.

use serde::{Deserialize, Serialize};

/// Whether the bench rotates or translates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Geometry {
    /// A shaft: torque \[N m\], angle \[rad\], speed \[rad/s\].
    #[default]
    Rotary,
    /// A slide: force \[N\], position \[m\], speed \[m/s\].
    Linear,
}

impl Geometry {
    /// `rotary` or `linear`.
    pub fn name(self) -> &'static str {
        match self {
            Geometry::Rotary => "rotary",
            Geometry::Linear => "linear",
        }
    }

    /// The unit of force (friction, torque) on this bench.
    pub fn force(self) -> &'static str {
        match self {
            Geometry::Rotary => "N m",
            Geometry::Linear => "N",
        }
    }

    /// The unit of position on this bench.
    pub fn position(self) -> &'static str {
        match self {
            Geometry::Rotary => "rad",
            Geometry::Linear => "m",
        }
    }
}

/// The registry unit `si` (linear SI, e.g. `N s/m`) as this bench reads it (`N m s/rad` on a
/// rotary bench). Unitless (`-`) and time-only units pass through.
pub fn bench_unit(si: &str, g: Geometry) -> String {
    if g == Geometry::Linear {
        return si.to_string();
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "N" => "N m",
            "m" => "rad",
            "kg" => "kg m^2",
            w => w,
        });
        word.clear();
    };
    for c in si.chars() {
        if c.is_ascii_alphabetic() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The bench unit of parameter `name` of registry model `model` (`mass`, the plant's pseudo
/// parameter in a torque replay, is a mass); `None` for an unknown model or name.
pub fn param_unit(model: &str, name: &str, g: Geometry) -> Option<String> {
    // The pseudo-parameters of the fits: a plant mass or inertia (`mass`, idim_ls's `j`) and
    // a force offset.
    if name == "mass" || name == "j" {
        return Some(bench_unit("kg", g));
    }
    if name == "offset" {
        return Some(bench_unit("N", g));
    }
    let e = crate::registry::entry(model).ok()?;
    e.params
        .iter()
        .find(|p| p.name == name)
        .map(|p| bench_unit(p.unit, g))
}

/// The registry catalogue ([`crate::registry::catalogue`]) with each parameter's `bench_unit`
/// for geometry `g` beside its SI `unit`.
pub fn catalogue_in(g: Geometry) -> serde_json::Value {
    let mut c = crate::registry::catalogue();
    for e in c.as_array_mut().into_iter().flatten() {
        for p in e["params"].as_array_mut().into_iter().flatten() {
            let u = bench_unit(p["unit"].as_str().unwrap_or("-"), g);
            p["bench_unit"] = u.into();
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotary_units_follow_the_dimension() {
        let r = |u| bench_unit(u, Geometry::Rotary);
        assert_eq!(r("N"), "N m");
        assert_eq!(r("m/s"), "rad/s");
        assert_eq!(r("N s/m"), "N m s/rad");
        assert_eq!(r("N/m"), "N m/rad");
        assert_eq!(r("N/s"), "N m/s");
        assert_eq!(r("m"), "rad");
        assert_eq!(r("kg"), "kg m^2");
        assert_eq!(r("s"), "s");
        assert_eq!(r("-"), "-");
        assert_eq!(bench_unit("N s/m", Geometry::Linear), "N s/m");
    }
}
