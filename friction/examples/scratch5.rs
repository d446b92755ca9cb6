use friction::identify::procedures::{self, Given, Table};
use serde_json::json;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let table = Table::from_csv(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let models: Vec<(&str, Vec<&str>)> = vec![
        ("coulomb_viscous", vec!["fc", "fv"]),
        ("stribeck_exp", vec!["fc", "fs", "fv", "vs"]),
        (
            "lugre",
            vec!["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"],
        ),
    ];
    for (m, fit) in &models {
        for offset in [false, true] {
            let mut g = Given::new();
            g.insert("fit".into(), json!(fit));
            if offset {
                g.insert("offset".into(), json!(true));
            }
            let t0 = std::time::Instant::now();
            match procedures::run("output_error", m, &table, &g) {
                Ok(r) => println!(
                    "{m} offset={offset}: rms {:.4} r2 {:.4} {:.1}s substeps {} verdict {:?} reasons {:?}\n   params {} \n   se {}",
                    r.mse.unwrap().sqrt(),
                    r.r2.unwrap_or(f64::NAN),
                    t0.elapsed().as_secs_f64(),
                    r.provenance.settings["substeps"],
                    r.verdict.status,
                    r.verdict.reasons,
                    serde_json::to_string(&r.params).unwrap(),
                    serde_json::to_string(&r.std_errors).unwrap()
                ),
                Err(e) => println!("{m} offset={offset}: {e}"),
            }
        }
    }
}
