//! Profile parsing and validation tests.

use super::*;

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
    // controlword..max_torque, the commands, the feedback block.
    let spans: Vec<(u16, u16)> = all.iter().map(|b| (b.start, b.count)).collect();
    assert_eq!(spans, [(0x00, 4), (0x10, 6), (0x20, 10)]);
    assert_eq!(p.extent(Table::Holding), Some(0x00..0x2A));
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
