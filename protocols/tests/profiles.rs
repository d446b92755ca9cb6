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
        "ASDA-B2",
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
    // Delta ASDA-B2: P3-02 = 0x0077 (RTU 8E1 on both ports), low word first; servo on is
    // P4-07 at 040EH.
    let b2 = Profile::load(profile_path("delta-asda-b2.toml")).unwrap();
    assert_eq!(b2.signal("comm_protocol").unwrap().address, 0x0304);
    assert_eq!(b2.role(Role::Enable).unwrap().address, 0x040E);
    assert_eq!(
        b2.role(Role::VelocityCommand)
            .unwrap()
            .decode(&[0x0BB8, 0])
            .unwrap(),
        300.0 * std::f64::consts::PI / 30.0
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

/// A Delta ASDA-A2 register image (parameters up to P4) on unit 1; `ignore_p3_03` makes the
/// "drive" drop writes to P3-03, as a drive whose parameter is locked would.
async fn delta_bench(
    kind: crate::Kind,
    ignore_p3_03: bool,
) -> (crate::Bench, protocols::SharedLink) {
    let delta = Profile::load(profile_path("delta-asda-a2.toml")).unwrap();
    let hook: Option<crate::util::Hook> = if ignore_p3_03 {
        Some(Box::new(|img: &mut crate::util::Image| {
            img.holding[0x0306] = 0;
            img.holding[0x0307] = 0;
        }))
    } else {
        None
    };
    let mut holding = vec![0u16; 0x0410];
    holding[0x0304] = 7; // P3-02 = 7: RTU 8,E,1
    holding[0x030A] = 1; // P3-05 = 1: RS-485
    let state = crate::util::SlaveState::default().with_unit(1, holding, hook);
    let bench = crate::Bench::start(kind, state).await;
    let link = protocols::Link::open(bench.config(&delta))
        .await
        .unwrap()
        .shared();
    (bench, link)
}

fn delta_image(bench: &crate::Bench, at: usize) -> [u16; 2] {
    let st = bench.state.lock().unwrap();
    let h = &st.units[&1].image.holding;
    [h[at], h[at + 1]]
}

async fn delta_connect_writes_and_reads_back_then_the_watchdog_takes_whole_seconds(
    kind: crate::Kind,
) {
    use std::sync::Arc;
    use std::time::Duration;
    let (bench, link) = delta_bench(kind, false).await;
    let delta = Arc::new(Profile::load(profile_path("delta-asda-a2.toml")).unwrap());
    let io = protocols::DeviceIo::new(delta.clone(), link.clone());
    assert!(delta.connect_sequence().is_some());
    io.run_sequence("connect").await.unwrap();
    // P2-30 = 5 (no EEPROM writes), P3-06 = 1 (DI1, SON, from the bus) and P3-03 = 1 (stop on
    // a communication fault), each low word first.
    assert_eq!(delta_image(&bench, 0x023C), [5, 0]);
    assert_eq!(delta_image(&bench, 0x030C), [1, 0]);
    assert_eq!(delta_image(&bench, 0x0306), [1, 0]);
    assert_eq!(io.read_signal("comm_protocol").await.unwrap().value, 7.0);

    let mut drive = protocols::Drive::new(delta.clone(), link.clone()).unwrap();
    drive.set_watchdog(Duration::from_secs(2)).await.unwrap();
    assert_eq!(delta_image(&bench, 0x0308), [2, 0]);
    assert_eq!(io.read_signal("comm_watchdog").await.unwrap().value, 2.0);

    // 0.5 s is below what the drive can do (whole seconds, 1..20): refused before anything
    // is sent, as a limit, not a link fault; the drive keeps its 2 s.
    let before = link.lock().await.stats().requests;
    let err = drive
        .set_watchdog(Duration::from_millis(500))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), protocols::ErrorKind::Limit, "{err}");
    assert!(!err.is_link_error());
    assert_eq!(
        err.to_string(),
        "comm_watchdog = 0.5 s is out of range: min 1 s"
    );
    assert_eq!(link.lock().await.stats().requests, before);
    assert_eq!(delta_image(&bench, 0x0308), [2, 0]);
}
crate::bench_test!(delta_connect_writes_and_reads_back_then_the_watchdog_takes_whole_seconds);

async fn a_drive_that_drops_a_connect_setting_fails_the_connect(kind: crate::Kind) {
    use std::sync::Arc;
    let (bench, link) = delta_bench(kind, true).await;
    let delta = Arc::new(Profile::load(profile_path("delta-asda-a2.toml")).unwrap());
    let io = protocols::DeviceIo::new(delta, link);
    let err = io.run_sequence("connect").await.unwrap_err();
    match &err {
        Error::Sequence {
            sequence,
            step,
            reason,
        } => {
            // The read-back of P3-03, after those of P2-30 and P3-06.
            assert_eq!((sequence.as_str(), *step), ("connect", 5));
            assert!(reason.contains("expected 0x0001"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.kind(), protocols::ErrorKind::Sequence);
    assert_eq!(delta_image(&bench, 0x0306), [0, 0]);
}
crate::bench_test!(a_drive_that_drops_a_connect_setting_fails_the_connect);

#[test]
fn watchdog_mapping_of_the_shipped_drives() {
    // Simulated drive: ms, 0 = off. Delta ASDA-A2: P3-04 at 0308H, whole seconds 1..20.
    let sim = Profile::load(profile_path("sim-drive.toml")).unwrap();
    let w = sim.role(Role::WatchdogTimeout).unwrap();
    assert_eq!((w.address, w.unit.declared.as_str()), (0x0002, "ms"));
    assert_eq!(w.encode(0.1).unwrap(), [100]);
    let delta = Profile::load(profile_path("delta-asda-a2.toml")).unwrap();
    let w = delta.role(Role::WatchdogTimeout).unwrap();
    assert_eq!((w.address, w.unit.declared.as_str()), (0x0308, "s"));
    assert_eq!((w.min, w.max), (Some(1.0), Some(20.0)));
    assert_eq!(w.encode(20.0).unwrap(), [20, 0]);
    assert!(w.encode(21.0).unwrap_err().is_limit());
    // The Oriental AZ's watchdog was not found in a cited source: not mapped, so a real run
    // needs allow_no_drive_watchdog.
    let az = Profile::load(profile_path("oriental-az.toml")).unwrap();
    assert!(az.role(Role::WatchdogTimeout).is_none());
}

#[test]
fn unverified_command_and_safety_signals_are_listed() {
    let names = |file: &str| -> Vec<String> {
        Profile::load(profile_path(file))
            .unwrap()
            .unverified_critical_signals()
            .iter()
            .map(|s| s.name.clone())
            .collect()
    };
    let delta = names("delta-asda-a2.toml");
    for want in [
        "alarm_code",
        "do_status",
        "servo_on",
        "comm_watchdog",
        "comm_fault_action",
    ] {
        assert!(delta.iter().any(|n| n == want), "{want} missing: {delta:?}");
    }
    // Verified from the manual: the commands, the mode; feedback is not a safety role.
    for not in [
        "speed_cmd_1",
        "torque_cmd_1",
        "control_mode",
        "kpp",
        "monitor_position",
    ] {
        assert!(!delta.iter().any(|n| n == not), "{not} listed: {delta:?}");
    }
    assert!(names("sim-drive.toml").is_empty());
    let az = names("oriental-az.toml");
    assert_eq!(
        az,
        [
            "dd_position",
            "dd_speed",
            "dd_current",
            "output_status",
            "present_alarm"
        ],
        "{az:?}"
    );
}

#[test]
fn write_rate_is_checked_against_the_profile() {
    let delta = Profile::load(profile_path("delta-asda-a2.toml")).unwrap();
    assert_eq!(delta.max_write_rate_hz(), Some(50.0));
    delta.check_write_rate(50.0).unwrap();
    delta.check_write_rate(20.0).unwrap();
    let err = delta.check_write_rate(100.0).unwrap_err();
    assert!(err.is_limit());
    assert_eq!(
        err.to_string(),
        "profile 'Delta ASDA-A2': timing.max_write_rate_hz = 50 Hz, a write rate of 100 Hz exceeds it"
    );
    assert!(delta.check_write_rate(f64::NAN).is_err());
    // No limit declared: any rate passes.
    let sim = Profile::load(profile_path("sim-drive.toml")).unwrap();
    assert_eq!(sim.max_write_rate_hz(), None);
    sim.check_write_rate(1000.0).unwrap();
}
