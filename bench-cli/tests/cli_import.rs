//! `bench runs import`: recordings made elsewhere (an Excel-style CSV, a MATLAB MAT-file, a
//! Parquet file) become runs that are listed, shown, exported, fitted and compared like
//! recorded ones; refused files name the line and column and store nothing; the same over
//! `POST /api/runs/import` (streamed, size-capped, token rules); `bench perf import`.

use crate::lab::json;
use crate::util::{bench, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

/// `bench simulate` of coulomb_viscous (fc 0.3 N m, fv 0.05 N m s/rad) driven by a velocity
/// sine: CSV `t,x,v,u,friction` rows (the header dropped).
pub(crate) fn simulated_rows() -> Vec<[f64; 5]> {
    let o = bench(&[
        "simulate",
        "--model",
        "coulomb_viscous",
        "--params",
        r#"{"fc":0.3,"fv":0.05}"#,
        "--scenario",
        r#"{"kind":"velocity","velocity":{"sine":{"amplitude":2.0,"omega":3.0,"phase":0.3}}}"#,
        "--dt",
        "1e-3",
        "--duration",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..5], ["t", "x", "v", "u", "friction"]);
    lines
        .map(|l| {
            let f: Vec<f64> = l.split(',').take(5).map(|x| x.parse().unwrap()).collect();
            [f[0], f[1], f[2], f[3], f[4]]
        })
        .collect()
}

/// The rows as Excel writes them in much of Europe: UTF-8 BOM, semicolons, decimal commas,
/// quoted header names with units in a second row, CRLF; one dropped sample (a 2 ms step).
pub(crate) fn excel_csv(rows: &[[f64; 5]]) -> String {
    let mut s =
        String::from("\u{feff}\"Time\";\"Angle\";\"Speed\";\"Motor torque\";\"Friction\"\r\n");
    s.push_str("s;rad;rad/s;N m;N·m\r\n");
    for (k, r) in rows.iter().enumerate() {
        if k == 700 {
            continue;
        }
        let cells: Vec<String> = r
            .iter()
            .map(|x| format!("{x:e}").replace('.', ","))
            .collect();
        s.push_str(&cells.join(";"));
        s.push_str("\r\n");
    }
    s
}

pub(crate) const EXCEL_COLUMNS: &str = "t=Time,x=Angle,v=Speed,u=Motor torque,friction=Friction";

#[test]
fn an_excel_csv_is_listed_shown_exported_fitted_and_compared_like_a_recorded_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").display().to_string();
    let rows = simulated_rows();
    let text = excel_csv(&rows);
    let file = dir.path().join("bench 7 (Excel).csv");
    std::fs::write(&file, &text).unwrap();
    let report = json(&bench(&[
        "runs",
        "import",
        file.to_str().unwrap(),
        "--columns",
        EXCEL_COLUMNS,
        "--bench",
        "lab-bench-7",
        "--db",
        &db,
        "--json",
    ]));
    let id = report["run_id"].as_i64().unwrap();
    assert_eq!(report["stats"]["samples"], rows.len() as u64 - 1);
    assert_eq!(report["geometry"], "rotary");
    assert_eq!(report["geometry_source"], "the file's units");
    assert_eq!(
        report["source"]["sha256"],
        format!("{:x}", Sha256::digest(text.as_bytes()))
    );
    assert_eq!(report["source"]["read"]["delimiter"], "semicolon");
    assert_eq!(
        report["stats"]["uniform"], false,
        "the dropped sample is a gap"
    );
    assert!((report["stats"]["dt_max"].as_f64().unwrap() - 2e-3).abs() < 1e-9);

    // Listed (by kind and by bench) and shown with its provenance.
    let list = json(&bench(&[
        "runs", "list", "--db", &db, "--kind", "imported", "--json",
    ]));
    assert_eq!(list["total"], 1);
    assert_eq!(list["runs"][0]["bench_id"], "lab-bench-7");
    let run = json(&bench(&[
        "runs",
        "show",
        &id.to_string(),
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(
        (run["kind"].as_str(), run["status"].as_str()),
        (Some("imported"), Some("completed"))
    );
    assert_eq!(run["spec"]["source"]["file"], "bench 7 (Excel).csv");
    assert_eq!(run["spec"]["columns"]["u"], "Motor torque");
    assert_eq!(run["spec"]["stated_units"]["friction"], "N·m");
    let shown = stdout(&bench(&["runs", "show", &id.to_string(), "--db", &db]));
    assert!(
        shown.contains("columns:          t=Time, x=Angle, v=Speed, u=Motor torque"),
        "{shown}"
    );

    // Exported: u as the drive torque, friction as the sensor torque, values bit for bit.
    let csv = stdout(&bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "csv",
        "--db",
        &db,
    ]));
    let line: Vec<&str> = csv.lines().nth(801).unwrap().split(',').collect();
    let want = rows[801];
    let got: Vec<f64> = [1, 2, 3, 5, 6]
        .iter()
        .map(|&k| line[k].parse().unwrap())
        .collect();
    assert_eq!(
        got,
        want.to_vec(),
        "row 801 (after the dropped one) keeps its values"
    );
    assert_eq!(line[4], "", "u_cmd stays empty");

    // Fitted: the friction–velocity scatter gives the generating model back.
    let fit = json(&bench(&[
        "fit",
        "--model",
        "coulomb_viscous",
        "--procedure",
        "static_curve",
        "--run",
        &id.to_string(),
        "--db",
        &db,
        "--json",
    ]));
    let p = &fit["params"];
    assert!((p["fc"].as_f64().unwrap() - 0.3).abs() < 1e-3, "{p}");
    assert!((p["fv"].as_f64().unwrap() - 0.05).abs() < 1e-3, "{p}");
    assert_eq!(fit["provenance"]["n_points"], rows.len() as u64 - 1);
    // Compared: the comparison is stored with the run.
    let cmp = json(&bench(&[
        "compare",
        "--estimate",
        &id.to_string(),
        "--validate",
        &id.to_string(),
        "--models",
        "coulomb_viscous=fc+fv,stribeck_exp=fc+fs+fv+vs",
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(cmp["rows"].as_array().unwrap().len(), 2);
    assert!(
        cmp["rows"][0]["validation"]["all"].as_f64().unwrap() < 1e-6,
        "{cmp}"
    );
    let run = json(&bench(&[
        "runs",
        "show",
        &id.to_string(),
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(run["comparisons"].as_array().unwrap().len(), 1);
}

/// `bench runs import FILE ARGS --db DB`; the run count after it.
fn import(db: &str, file: &Path, args: &[&str]) -> (std::process::Output, u64) {
    let mut all = vec!["runs", "import", file.to_str().unwrap(), "--db", db];
    all.extend_from_slice(args);
    let o = bench(&all);
    let list = json(&bench(&["runs", "list", "--db", db, "--json"]));
    (o, list["total"].as_u64().unwrap())
}

/// Bad files and options on either engine: exit 2, the message naming the line and column
/// (or the option), and no run stored, even when the refusal comes after committed chunks.
fn refusals_store_nothing(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    // 60 000 good rows first: the recorder commits every 50 000.
    let mut long = String::from("t,x,u\n");
    for k in 0..60_000 {
        long.push_str(&format!("{},{},1\n", k as f64 * 1e-3, k as f64 * 1e-6));
    }
    let cases: Vec<(&str, String, Vec<&str>, &str)> = vec![
        (
            "nan.csv",
            format!("{long}60,NaN,1\n"),
            vec![],
            "nan.csv: line 60002, column 'x' (x): NaN is not a finite number",
        ),
        (
            "text.csv",
            "t,x,u\n0,1,2\n0.001,one,2\n".into(),
            vec![],
            "text.csv: line 3, column 'x': 'one' is not a number",
        ),
        (
            "back.csv",
            "t,x\n0,1\n0.002,1\n0.001,1\n".into(),
            vec![],
            "back.csv: line 4, column 't' (t): time goes backwards: 0.001 s after 0.002 s on line 3",
        ),
        (
            "units.csv",
            "t,x,u\ns,m,N\n0,1,2\n1,1,2\n".into(),
            vec!["--geometry", "rotary"],
            "units.csv: line 2 (the units row), column 'x' (x): unit 'm' contradicts --geometry rotary, whose x is in rad",
        ),
        (
            "missing.csv",
            "t,x\n0,1\n1,2\n".into(),
            vec!["--columns", "t=t,x=pos"],
            "--columns: no column 'pos' in the file (it has: t, x)",
        ),
        (
            "key.csv",
            "t,x\n0,1\n1,2\n".into(),
            vec!["--columns", "t=t,position=x"],
            "--columns: unknown columns key 'position' (known: t, x, v, u, friction)",
        ),
        (
            "scale.csv",
            "t,x\n0,1\n1,2\n".into(),
            vec!["--scale", "u=2"],
            "--scale: scale for 'u', which no column is mapped to",
        ),
    ];
    for (name, text, args, msg) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let (o, total) = import(db, &file, &args);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim(), format!("bench: {msg}"), "{name}");
        assert_eq!(total, 0, "{name}: nothing stored");
    }
    // The same file, fixed, imports.
    let file = dir.path().join("good.csv");
    std::fs::write(&file, &long).unwrap();
    let (o, total) = import(db, &file, &["--json"]);
    assert_eq!((o.status.code(), total), (Some(0), 1), "{}", stderr(&o));
    assert_eq!(json(&o)["stats"]["samples"], 60_000);
}

#[test]
fn refused_files_name_the_line_and_column_and_store_nothing_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    refusals_store_nothing(&dir.path().join("runs.db").display().to_string());
}

#[test]
fn refused_files_name_the_line_and_column_and_store_nothing_postgres() {
    if let Some(db) = crate::lab::fresh_database() {
        refusals_store_nothing(&db);
    }
}

/// A level 5 MAT-file of double column vectors, each variable zlib-compressed as MATLAB's
/// `save` writes them by default.
pub(crate) fn mat_file(vars: &[(&str, &[f64])]) -> Vec<u8> {
    use std::io::Write;
    let mut out =
        b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: Thu Nov 26 10:00:00 2026".to_vec();
    out.resize(116, b' ');
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&0x0100u16.to_le_bytes());
    out.extend_from_slice(b"IM");
    let le = |x: u32| x.to_le_bytes();
    for (name, values) in vars {
        let mut m = Vec::new();
        m.extend(le(6)); // miUINT32 array flags
        m.extend(le(8));
        m.extend(le(6)); // mxDOUBLE_CLASS
        m.extend(le(0));
        m.extend(le(5)); // miINT32 dimensions
        m.extend(le(8));
        m.extend(le(values.len() as u32));
        m.extend(le(1));
        m.extend(le(1)); // miINT8 name
        m.extend(le(name.len() as u32));
        m.extend(name.as_bytes());
        m.resize(m.len().div_ceil(8) * 8, 0);
        m.extend(le(9)); // miDOUBLE real part
        m.extend(le(8 * values.len() as u32));
        m.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        let mut element = le(14).to_vec(); // miMATRIX
        element.extend(le(m.len() as u32));
        element.extend(m);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&element).unwrap();
        let z = z.finish().unwrap();
        out.extend(le(15)); // miCOMPRESSED
        out.extend(le(z.len() as u32));
        out.extend(z);
    }
    out
}

#[test]
fn a_mat_file_and_a_parquet_export_import_with_their_scales_and_units() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").display().to_string();
    // An EMPS-like file: t, qm (position, m), qg (reference), vir (drive volts).
    let n = 2000;
    let t: Vec<f64> = (0..n).map(|k| k as f64 * 1e-3).collect();
    let qm: Vec<f64> = t.iter().map(|t| 0.1 * (2.0 * t).sin()).collect();
    let vir: Vec<f64> = t.iter().map(|t| 0.5 * (2.0 * t).cos()).collect();
    let mat = dir.path().join("DATA_LIKE_EMPS.mat");
    std::fs::write(
        &mat,
        mat_file(&[("qg", &qm), ("qm", &qm), ("t", &t), ("vir", &vir)]),
    )
    .unwrap();
    let r = json(&bench(&[
        "runs",
        "import",
        mat.to_str().unwrap(),
        "--columns",
        "t=t,x=qm,u=vir",
        "--scale",
        "u=35.1507",
        "--geometry",
        "linear",
        "--db",
        &db,
        "--json",
    ]));
    let id = r["run_id"].as_i64().unwrap().to_string();
    assert_eq!(
        (r["source"]["format"].as_str(), r["units"]["u"].as_str()),
        (Some("mat"), Some("N"))
    );
    let csv = stdout(&bench(&[
        "runs", "export", &id, "--format", "csv", "--db", &db,
    ]));
    let row: Vec<&str> = csv.lines().nth(1001).unwrap().split(',').collect();
    assert_eq!(row[2].parse::<f64>().unwrap(), qm[1000]);
    assert_eq!(row[5].parse::<f64>().unwrap(), vir[1000] * 35.1507);
    assert_eq!(row[3], "", "v is not derived at import");
    // A fit that needs v says so; one that derives it from x runs.
    let o = bench(&[
        "fit",
        "--model",
        "ruina",
        "--procedure",
        "ruina_step",
        "--run",
        &id,
        "--db",
        &db,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing column 'v'"), "{}", stderr(&o));
    let torque = r#"{"fit": ["fc"], "replay": "torque", "mass": 1.0}"#;
    let id_n = id.parse().unwrap();
    let report = crate::util::fit_run(&db, "coulomb_viscous", "output_error", id_n, Some(torque));
    assert!(report["params"]["fc"].is_number(), "{report}");

    // A run's Parquet export imports back (units from the field metadata).
    let pq = dir.path().join("run.parquet");
    let o = bench(&[
        "runs",
        "export",
        &id,
        "--format",
        "parquet",
        "--out",
        pq.to_str().unwrap(),
        "--db",
        &db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bench(&[
        "runs",
        "import",
        pq.to_str().unwrap(),
        "--columns",
        "t=t,x=x,u=torque_motor",
        "--db",
        &db,
    ]);
    // The export labels its columns in rotary units (rad, N m): linear data say so.
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bench(&[
        "runs",
        "import",
        pq.to_str().unwrap(),
        "--columns",
        "t=t,x=x,u=torque_motor",
        "--geometry",
        "linear",
        "--db",
        &db,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("column 'x' (x): unit 'rad' contradicts --geometry linear"),
        "{}",
        stderr(&o)
    );
    let list = json(&bench(&["runs", "list", "--db", &db, "--json"]));
    assert_eq!(list["total"], 2);
    let again = &list["runs"][0];
    assert_eq!(again["sample_count"], n as u64);
}

#[test]
fn perf_import_reports_megabytes_per_second_and_memory() {
    let o = bench(&["perf", "import", "--mb", "2", "--json"]);
    let v = json(&o);
    assert!(v["import_mb_per_s"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["rows"].as_u64().unwrap() > 20_000, "{v}");
    assert!(v["peak_rss_mb_above_idle"].as_f64().is_some(), "{v}");
}

/// `bench-daemon/tests/fixtures/NAME` (written by `make_fixtures.py` with SciPy and pyarrow).
fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn files_written_by_scipy_and_pyarrow_import_to_the_same_samples_and_fit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").display().to_string();
    let mat = json(&bench(&[
        "runs",
        "import",
        &fixture("joint.mat"),
        "--columns",
        "t=t,x=angle,v=drive:2,u=drive:1,friction=friction",
        "--db",
        &db,
        "--json",
    ]));
    let pq = json(&bench(&[
        "runs",
        "import",
        &fixture("joint.parquet"),
        "--columns",
        "t=time,x=angle,v=speed,u=torque,friction=friction",
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(mat["stats"]["samples"], 4000);
    assert_eq!(pq["stats"]["samples"], 4000);
    assert_eq!(pq["geometry_source"], "the file's units");
    assert_eq!(
        pq["stats"]["largest_gap_at"],
        mat["stats"]["largest_gap_at"]
    );
    let names: Vec<&str> = mat["source"]["read"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"meta") && names.contains(&"note"),
        "{names:?}"
    );
    let export = |id: &Value| {
        let o = bench(&[
            "runs",
            "export",
            &id.to_string(),
            "--format",
            "csv",
            "--db",
            &db,
        ]);
        stdout(&o)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (a, b) = (export(&mat["run_id"]), export(&pq["run_id"]));
    for k in [0, 1499, 1500, 3999] {
        let (ra, rb): (Vec<&str>, Vec<&str>) =
            (a[k].split(',').collect(), b[k].split(',').collect());
        for col in [1, 2, 5, 6] {
            assert_eq!(ra[col], rb[col], "row {k}, column {col}");
        }
        let (va, vb): (f64, f64) = (ra[3].parse().unwrap(), rb[3].parse().unwrap());
        assert!(
            (va - vb).abs() < 1e-6,
            "speed {va} vs {vb} (float32 in the Parquet file)"
        );
    }
    // A variable that is not numbers, named.
    let o = bench(&[
        "runs",
        "import",
        &fixture("joint.mat"),
        "--columns",
        "t=t,x=note",
        "--db",
        &db,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("variable 'note' is a 1×15 char array, not numbers"),
        "{}",
        stderr(&o)
    );
    // The Stribeck curve comes back from the measured friction.
    let fit = json(&bench(&[
        "fit",
        "--model",
        "stribeck_exp",
        "--procedure",
        "static_curve",
        "--run",
        &pq["run_id"].to_string(),
        "--given",
        r#"{"delta": 2}"#,
        "--db",
        &db,
        "--json",
    ]));
    let p = &fit["params"];
    for (k, want, tol) in [
        ("fc", 0.25, 0.01),
        ("fs", 0.4, 0.02),
        ("vs", 0.05, 0.005),
        ("fv", 0.02, 0.005),
    ] {
        let got = p[k].as_f64().unwrap();
        assert!((got - want).abs() < tol, "{k} = {got}, want {want}: {fit}");
    }
}
