use friction::identify::procedures::synthetic::BallScrew;
use friction::identify::procedures::{self, Given, Table};
use serde_json::json;

fn show(name: &str, r: &procedures::FitReport) {
    println!(
        "== {name}: params {}\n   se {}\n   ci {}\n   n_eff {:?} r2 {:?} mse {:?} verdict {:?}\n   settings {}\n   notes {:?}",
        serde_json::to_string(&r.params).unwrap(),
        serde_json::to_string(&r.std_errors).unwrap(),
        serde_json::to_string(&r.ci95).unwrap(),
        r.n_eff,
        r.r2,
        r.mse,
        r.verdict,
        serde_json::to_string(&r.provenance.settings).unwrap(),
        r.provenance.notes
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let table = if let Some(f) = args.get(1) {
        Table::from_csv(&std::fs::read_to_string(f).unwrap()).unwrap()
    } else {
        BallScrew::default().simulate().unwrap()
    };
    let mut g = Given::new();
    g.insert("offset".into(), json!(true));
    for (model, proc_, given) in [
        ("coulomb_viscous", "idim_ls", g.clone()),
        ("coulomb_viscous", "idim_ls", Given::new()),
        ("stribeck_exp", "idim_ls", g.clone()),
        ("coulomb_viscous", "power_rls", g.clone()),
        ("coulomb_viscous", "power_rls", Given::new()),
    ] {
        let t = std::time::Instant::now();
        match procedures::run(proc_, model, &table, &given) {
            Ok(r) => show(
                &format!(
                    "{model} {proc_} {:?} {:.3}s",
                    given,
                    t.elapsed().as_secs_f64()
                ),
                &r,
            ),
            Err(e) => println!("{model} {proc_}: {e}"),
        }
    }
    let mut g2 = g.clone();
    g2.insert("eta".into(), json!("threshold"));
    match procedures::run("power_rls", "coulomb_viscous", &table, &g2) {
        Ok(r) => show("threshold", &r),
        Err(e) => println!("threshold: {e}"),
    }
    g2.insert("v_min".into(), json!(20.0));
    match procedures::run("power_rls", "coulomb_viscous", &table, &g2) {
        Ok(r) => show("threshold 20", &r),
        Err(e) => println!("threshold 20: {e}"),
    }
}
