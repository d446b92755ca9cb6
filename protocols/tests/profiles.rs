//! The shipped profiles: they validate, their manual test vectors decode, and a broken file
//! is rejected with its name, the entry and the rule.

use protocols::profile::load_dir;
use protocols::{Error, Profile, Role};

use crate::util::profile_path;

#[test]
fn every_shipped_profile_validates_and_its_test_vectors_decode() {
    let dir = format!("{}/../profiles", env!("CARGO_MANIFEST_DIR"));
    let all = load_dir(&dir).unwrap();
    let names: Vec<&str> = all.iter().map(|p| p.device.name.as_str()).collect();
    for want in [
        "simulated drive",
        "simulated torque sensor",
        "ASDA-A2",
        "AZ",
        "weighing",
    ] {
        assert!(
            names.iter().any(|n| n.contains(want)),
            "no profile for {want}: {names:?}"
        );
    }
    for p in &all {
        let n = p.check_test_vectors().unwrap();
        assert!(n >= 1, "{}: no test vectors", p.file);
    }
}

#[test]
fn manual_vectors_decode_to_the_documented_values() {
    // Oriental Motor AZ FAQ 0331: position -1000 steps = FFFF FC18h, upper word first.
    let az = Profile::load(profile_path("oriental-az.toml")).unwrap();
    let pos = az.signal("op0_position").unwrap();
    assert_eq!(pos.decode_raw(&[0xFFFF, 0xFC18]).unwrap().as_f64(), -1000.0);
    // Delta ASDA-A2: P1-09 = 3000 (0.1 rpm) written as [0x0BB8, 0x0000], low word first.
    let delta = Profile::load(profile_path("delta-asda-a2.toml")).unwrap();
    let v = delta.role(Role::VelocityCommand).unwrap();
    assert_eq!(v.address, 0x0112);
    assert_eq!(
        v.encode(300.0 * std::f64::consts::PI / 30.0).unwrap(),
        [0x0BB8, 0x0000]
    );
    // Weighing transmitter: reply FF FF C1 EF = -15889, scaled by 10^-decimals.
    let w = Profile::load(profile_path("generic-weighing-transmitter.toml")).unwrap();
    let gross = w.signal("gross").unwrap();
    assert!((gross.decode_with_decimals(&[0xFFFF, 0xC1EF], 2).unwrap() + 158.89).abs() < 1e-9);
    assert_eq!(gross.decode(&[0xFFFF, 0xC1EF]).unwrap(), -15889.0);
}

#[test]
fn a_bad_profile_file_is_named_with_entry_and_rule() {
    let dir = std::env::temp_dir().join(format!("protocols-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(profile_path("sim-drive.toml"))
        .unwrap()
        .replace("word_order = \"CDAB\"", "word_order = \"CADB\"");
    let path = dir.join("broken-drive.toml");
    std::fs::write(&path, text).unwrap();
    let err = Profile::load(&path).unwrap_err();
    match &err {
        Error::Profile {
            file,
            field,
            reason,
        } => {
            assert!(file.ends_with("broken-drive.toml"), "{file}");
            assert_eq!(field, "encoding.word_order");
            assert!(reason.contains("'CADB' is not one of"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let shown = err.to_string();
    assert!(
        shown.contains("broken-drive.toml: encoding.word_order: 'CADB'"),
        "{shown}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
