//! Profile parsing and validation tests.

use std::time::Duration;

use super::*;
use crate::ErrorKind;
use crate::error::Error;

const MINIMAL_DRIVE: &str = r#"
[device]
name = "t"
kind = "drive"
[[signal]]
name = "enable"
role = "enable"
reg = { table = "coil", address = 0, type = "bool" }
eng = { access = "rw" }
[[signal]]
name = "torque_cmd"
role = "torque_command"
reg = { address = 0x10, type = "i16" }
eng = { scale = 1.0, unit = "mN m", access = "rw", min = -2000, max = 2000 }
"#;

fn err_of(text: &str) -> (String, String, String) {
    match Profile::from_toml_str(text, "bad.toml") {
        Err(Error::Profile {
            file,
            field,
            reason,
        }) => (file, field, reason),
        other => panic!("expected a profile error, got {other:?}"),
    }
}

#[test]
fn minimal_drive_validates_and_converts_units() {
    let p = Profile::from_toml_str(MINIMAL_DRIVE, "t.toml").unwrap();
    let s = p.role(Role::TorqueCommand).unwrap();
    assert_eq!(s.si_unit(), "N m");
    assert_eq!(s.encode(-1.5).unwrap(), [(-1500i16) as u16]);
    assert!((s.decode(&[250]).unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(s.max, Some(2.0));
    match s.encode(2.5) {
        Err(Error::OutOfRange { signal, limit, .. }) => {
            assert_eq!(signal, "torque_cmd");
            assert_eq!(limit, "max 2 N m");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_profiles_name_file_entry_and_rule() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "type = \"i16\"",
            "type = \"i24\"",
            "signal 'torque_cmd' (#1).reg.type",
            "'i24' is not one of",
        ),
        (
            "unit = \"mN m\"",
            "unit = \"rpm\"",
            "signal 'torque_cmd' (#1).eng.unit",
            "role 'torque_command' needs a unit that converts to N m",
        ),
        (
            "min = -2000",
            "min = 3000",
            "signal 'torque_cmd' (#1).eng.min",
            "must be ≤ max",
        ),
        (
            "max = 2000",
            "max = 40000",
            "signal 'torque_cmd' (#1).eng.max",
            "outside the i16 range",
        ),
        (
            "address = 0x10",
            "address = 0x10000",
            "signal 'torque_cmd' (#1).reg.address",
            "outside 0..=65535",
        ),
        (
            "kind = \"drive\"",
            "kind = \"motor\"",
            "device.kind",
            "'motor' is not one of",
        ),
        (
            "role = \"torque_command\"",
            "role = \"torque_cmd\"",
            "signal 'torque_cmd' (#1).role",
            "is not a known role",
        ),
        (
            "role = \"torque_command\"",
            "role = \"enable\"",
            "signal 'torque_cmd' (#1).role",
            "already taken by signal 'enable'",
        ),
        (
            "access = \"rw\", min",
            "access = \"r\", min",
            "signal 'torque_cmd' (#1).eng.access",
            "role 'torque_command' is written",
        ),
        (
            "type = \"bool\"",
            "type = \"u16\"",
            "signal 'enable' (#0).reg.type",
            "must be \"bool\"",
        ),
        (
            "eng = { scale = 1.0,",
            "eng = { scale = 0.0,",
            "signal 'torque_cmd' (#1).eng.scale",
            "must be finite and non-zero",
        ),
        (
            "name = \"t\"",
            "name = \"t\"\ncolour = \"red\"",
            "line 4",
            "unknown field `colour`",
        ),
    ];
    for (from, to, field, reason) in cases {
        assert!(MINIMAL_DRIVE.contains(from), "{from}");
        let text = MINIMAL_DRIVE.replacen(from, to, 1);
        let (f, fl, r) = err_of(&text);
        assert_eq!(f, "bad.toml");
        assert_eq!(&fl, field, "case {to}: {r}");
        assert!(
            r.contains(reason),
            "case {to}: reason {r:?} lacks {reason:?}"
        );
    }
}

#[test]
fn drive_rules_are_enforced() {
    let no_enable = MINIMAL_DRIVE.replace("role = \"enable\"\n", "");
    let (_, field, reason) = err_of(&no_enable);
    assert_eq!(field, "sequence");
    assert!(reason.contains("'enable' sequence"), "{reason}");

    let bad_seq = format!(
        "{MINIMAL_DRIVE}\n[[sequence]]\nname = \"enable\"\nsteps = [{{ write = \"nope\", value = 1 }}]\n"
    );
    let (_, field, reason) = err_of(&bad_seq);
    assert_eq!(field, "sequence 'enable' (#0).steps[0]");
    assert!(reason.contains("'nope' is not a signal"), "{reason}");

    let bad_vec = format!(
        "{MINIMAL_DRIVE}\n[[test_vector]]\nsignal = \"torque_cmd\"\nregisters = [100]\nvalue = 99.0\n"
    );
    let (_, field, reason) = err_of(&bad_vec);
    assert_eq!(field, "test_vector #0 ('torque_cmd').value");
    assert!(
        reason.contains("decode to 100 mN m, expected 99"),
        "{reason}"
    );

    let bad_crc = format!(
        "{MINIMAL_DRIVE}\n[[test_vector]]\nsignal = \"torque_cmd\"\nframes = [\"01 06 00 10 00 64 00 00\"]\n"
    );
    let (_, field, reason) = err_of(&bad_crc);
    assert_eq!(field, "test_vector #0 ('torque_cmd').frames[0]");
    assert!(reason.contains("CRC mismatch"), "{reason}");
}

#[test]
fn read_plans_merge_neighbours_within_the_gap() {
    let p = Profile::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../profiles/sim-drive.toml"
    ))
    .unwrap();
    let plan = p.poll_plan("fast").unwrap();
    assert_eq!(plan.len(), 1, "{plan:?}");
    assert_eq!((plan[0].start, plan[0].count), (0x20, 10));
    let all = p.readable_plan();
    // controlword..max_torque, the commands, the feedback block with the temperature.
    let spans: Vec<(u16, u16)> = all.iter().map(|b| (b.start, b.count)).collect();
    assert_eq!(spans, [(0x00, 4), (0x10, 6), (0x20, 11)]);
    assert_eq!(p.extent(Table::Holding), Some(0x00..0x2B));
    assert_eq!(p.extent(Table::Input), None);
    let torque_fb = p.role(Role::TorqueFeedback).unwrap();
    let data: Vec<u16> = (0..10).collect();
    assert_eq!(plan[0].slice(torque_fb, &data), Some(&[8u16, 9][..]));
}

#[test]
fn serial_timing() {
    let s = SerialSettings {
        baud: 9600,
        parity: Parity::Even,
        data_bits: 8,
        stop_bits: 1,
    };
    assert_eq!(s.bits_per_char(), 11);
    assert!((s.t35().as_secs_f64() - 3.5 * 11.0 / 9600.0).abs() < 1e-8);
    let fast = SerialSettings { baud: 115_200, ..s };
    assert_eq!(fast.t35(), Duration::from_micros(1750));
}

#[test]
fn every_shipped_profile_validates_and_its_vectors_decode() {
    let all = load_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles")).unwrap();
    assert!(all.len() >= 2);
    for p in &all {
        let n = p.check_test_vectors().unwrap();
        assert!(n >= 1, "{}: no test vectors", p.file);
    }
}

/// MINIMAL_DRIVE plus a read/write setting and a watchdog in whole seconds (0 = off).
fn with_settings(connect: &str) -> String {
    format!(
        r#"{MINIMAL_DRIVE}
[[signal]]
name = "fault_action"
reg = {{ address = 0x20, type = "u32" }}
eng = {{ access = "rw" }}
[[signal]]
name = "wd"
role = "watchdog_timeout"
reg = {{ address = 0x22, type = "u16" }}
eng = {{ unit = "s", access = "rw", min = 0, max = 20 }}
[[signal]]
name = "cmd_only"
reg = {{ address = 0x24, type = "u16" }}
eng = {{ access = "w" }}
[[sequence]]
name = "connect"
steps = [{connect}]
"#
    )
}

#[test]
fn connect_settings_must_be_read_back() {
    let ok = with_settings(
        r#"{ write = "fault_action", value = 1 }, { wait_ms = 5 },
           { expect = "fault_action", mask = 0xFFFF, value = 1 }"#,
    );
    let p = Profile::from_toml_str(&ok, "t.toml").unwrap();
    assert_eq!(p.connect_sequence().unwrap().steps.len(), 3);

    let cases: &[(&str, &str)] = &[
        (
            r#"{ write = "fault_action", value = 1 }"#,
            "'fault_action' = 0x1 is never read back",
        ),
        (
            // Read back before the write: proves nothing.
            r#"{ expect = "fault_action", value = 1 }, { write = "fault_action", value = 1 }"#,
            "is never read back",
        ),
        (
            r#"{ write = "fault_action", value = 1 }, { expect = "fault_action", value = 0 }"#,
            "is never read back",
        ),
        (
            // A mask that leaves written bits unchecked.
            r#"{ write = "fault_action", value = 65537 }, { expect = "fault_action", mask = 0xFFFF, value = 1 }"#,
            "is never read back",
        ),
        (
            r#"{ write = "cmd_only", value = 1 }"#,
            "write-only: a connect setting must be readable",
        ),
    ];
    for (steps, reason) in cases {
        let (_, field, r) = err_of(&with_settings(steps));
        assert!(
            field.starts_with("sequence 'connect' (#0).steps["),
            "{steps}: {field}"
        );
        assert!(r.contains(reason), "{steps}: {r}");
    }
    // The same steps in another sequence are not held to the rule.
    let other = with_settings(r#"{ wait_ms = 1 }"#).replace(
        "[[sequence]]\nname = \"connect\"",
        "[[sequence]]\nname = \"warm_up\"",
    ) + "\n";
    let p = Profile::from_toml_str(&other, "t.toml").unwrap();
    assert!(p.connect_sequence().is_none());
}

#[test]
fn a_watchdog_that_would_round_to_off_is_refused() {
    let p = Profile::from_toml_str(&with_settings(r#"{ wait_ms = 1 }"#), "t.toml").unwrap();
    let wd = p.role(Role::WatchdogTimeout).unwrap();
    assert_eq!(wd.encode(0.0).unwrap(), [0]); // explicitly off
    assert_eq!(wd.encode(2.0).unwrap(), [2]);
    assert_eq!(wd.encode(1.4).unwrap(), [1]);
    let err = wd.encode(0.2).unwrap_err();
    assert!(err.is_limit(), "{err:?}");
    assert!(
        err.to_string().contains("rounds to 0 (watchdog off)"),
        "{err}"
    );
    // Other signals round small values to 0 as usual (a command of 0.4 mN m is 0 counts).
    let t = p.role(Role::TorqueCommand).unwrap();
    assert_eq!(t.encode(0.0004).unwrap(), [0]);
}

#[test]
fn limit_refusals_are_their_own_kind_and_clamp_is_available() {
    let p = Profile::from_toml_str(MINIMAL_DRIVE, "t.toml").unwrap();
    let t = p.role(Role::TorqueCommand).unwrap();
    let err = t.encode(2.5).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Limit);
    assert_eq!(err.kind().name(), "limit");
    assert!(err.is_limit() && !err.is_link_error());
    assert!(t.check_limits(-2.0).is_ok());
    assert!(t.check_limits(f64::INFINITY).unwrap_err().is_limit());
    assert_eq!(t.clamp(2.5), 2.0);
    assert_eq!(t.clamp(-9.0), -2.0);
    assert_eq!(t.clamp(1.25), 1.25);
    assert!(t.clamp(f64::NAN).is_nan());
    let timeout = Error::Timeout {
        context: "read".into(),
        after: Duration::from_millis(5),
    };
    assert_eq!(timeout.kind(), ErrorKind::Link);
    let bad = Profile::from_toml_str("x", "bad.toml").unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Profile);
}
