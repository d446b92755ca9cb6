//! The configuration's parsing and checks.
use super::*;

#[test]
fn shipped_sim_config_loads_with_its_profiles_and_models() {
    let l = Loaded::sim("127.0.0.1:5020");
    assert_eq!(l.config.limits, BenchLimits::sim_default());
    assert!(l.sensor.is_some());
    let (specs, used) = l.lockstep_specs(None, |_| Ok(None)).unwrap();
    assert!(used.iter().all(|u| u["source"] == "defaults"), "{used:?}");
    assert!(specs.len() >= 5, "{specs:?}");
}

#[test]
fn errors_name_the_section_and_field() {
    let base = SIM_TOML.replace("torque_nm = 2.0", "torque_nm = -1.0");
    let e = BenchConfig::parse(&base, "b.toml").unwrap_err().to_string();
    assert!(
        e.contains("b.toml: [limits]") && e.contains("torque_nm (-1)"),
        "{e}"
    );
    let e = BenchConfig::parse(&format!("foo = 1\n{SIM_TOML}"), "b.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `foo`"), "{e}");
}

#[test]
fn zero_reads_is_the_sensors_and_at_least_one() {
    let with = |section: &str, n: u32| {
        let at = format!("[{section}]\n");
        SIM_TOML.replacen(&at, &format!("{at}zero_reads = {n}\n"), 1)
    };
    let c = BenchConfig::parse(&with("sensor", 25), "b.toml").unwrap();
    assert_eq!(c.sensor.unwrap().zero_reads, Some(25));
    for (text, says) in [
        (
            with("sensor", 0),
            "b.toml: [sensor] zero_reads = 0: at least 1",
        ),
        (
            with("drive", 5),
            "b.toml: [drive] zero_reads = 5 is for [sensor]",
        ),
    ] {
        let e = BenchConfig::parse(&text, "b.toml").unwrap_err().to_string();
        assert!(e.starts_with(says), "{e} vs {says}");
    }
}

#[test]
fn own_connection_is_for_the_sensor() {
    assert!(BenchConfig::sim().sensor.unwrap().own_connection);
    let on_drive = SIM_TOML.replacen(
        "tcp = \"127.0.0.1:5020\"",
        "tcp = \"127.0.0.1:5020\"\nown_connection = true",
        1,
    );
    let e = BenchConfig::parse(&on_drive, "b.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("b.toml: [drive] own_connection = true is for [sensor]"),
        "{e}"
    );
    // On a serial line (sim.toml copied and pointed at a port) it has nothing to open.
    let serial = SIM_TOML.replace("tcp = \"127.0.0.1:5020\"", "serial = \"/dev/ttyUSB0\"");
    assert!(BenchConfig::parse(&serial, "b.toml").is_ok());
}

#[test]
fn suspend_entries_are_checked_with_their_line() {
    let entry = "\n[[suspend]]\nsignal = \"drive.temperature\"\nabove = 60\nhold_s = 30\n";
    let ok = BenchConfig::parse(&format!("{SIM_TOML}{entry}"), "b.toml").unwrap();
    let line = SIM_TOML.lines().count() + 2;
    assert_eq!(ok.suspend[0].line, Some(line));
    assert_eq!(ok.suspend[0].suspended_timeout_s, 3600.0);
    for (change, says) in [
        ("above = 60", "above and below are both given; give one"),
        ("hold_s = -1", "hold_s = -1 must be finite and >= 0"),
        (
            "suspended_timeout_s = 0",
            "suspended_timeout_s = 0 must be finite and > 0",
        ),
    ] {
        let text = format!("{SIM_TOML}{entry}{}\n", change.replace("above", "below"));
        let text = if change.starts_with("hold_s") {
            text.replace("hold_s = 30\n", "")
        } else {
            text
        };
        let e = BenchConfig::parse(&text, "b.toml").unwrap_err().to_string();
        assert_eq!(e, format!("b.toml: [[suspend]] #1 (line {line}): {says}"));
    }
    let text = format!(
        "{SIM_TOML}{}",
        entry.replace("drive.temperature", "temperature")
    );
    let e = BenchConfig::parse(&text, "b.toml").unwrap_err().to_string();
    assert!(e.contains("must be drive.NAME or sensor.NAME"), "{e}");
    // Against the profile: a signal it does not have.
    let dir = std::env::temp_dir().join(format!("suspend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.toml");
    std::fs::write(
        &path,
        format!("{SIM_TOML}{}", entry.replace("temperature", "humidity")),
    )
    .unwrap();
    let e = Loaded::from_file(&path).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        e.contains(&format!(
            "[[suspend]] #1 (line {line}): signal = \"drive.humidity\""
        )),
        "{e}"
    );
    assert!(e.contains("has no signal 'humidity'"), "{e}");
}
