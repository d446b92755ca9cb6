//! A column's header as files write it: a name and, in trailing brackets, its unit.

/// `x [m]` → `x`, `Torque (N m)` → `Torque`: a header name without its bracketed unit.
pub fn bare_name(name: &str) -> &str {
    match header_unit(name) {
        Some((bare, _)) => bare,
        None => name,
    }
}

/// The unit in a header name's trailing brackets: `t [s]` → (`t`, `s`); `x (m)` too.
pub fn header_unit(name: &str) -> Option<(&str, &str)> {
    let name = name.trim();
    let close = name.chars().last()?;
    let open = match close {
        ']' => '[',
        ')' => '(',
        _ => return None,
    };
    let at = name.rfind(open)?;
    let bare = name[..at].trim_end();
    let unit = name[at + 1..name.len() - 1].trim();
    (!bare.is_empty() && !unit.is_empty()).then_some((bare, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_units_are_split_off() {
        assert_eq!(header_unit("t [s]"), Some(("t", "s")));
        assert_eq!(header_unit("Torque (N m)"), Some(("Torque", "N m")));
        assert_eq!(header_unit("x"), None);
        assert_eq!(header_unit("[s]"), None);
        assert_eq!(bare_name("pos [rad]"), "pos");
    }
}
