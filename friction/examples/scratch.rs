use friction::identify::procedures::output_error::{self, Options, Segment, excitation_velocity};
use friction::registry::{ModelSpec, build_model};
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fine: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(10);
    let secs: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(20);
    let truth =
        json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let mut m = build_model(&ModelSpec {
        model: "lugre".into(),
        params: truth.clone(),
    })
    .unwrap();
    let seg = Segment::sample_velocity_driven(
        "x",
        m.as_mut(),
        excitation_velocity,
        1e-3,
        secs * 1000,
        fine,
        0.01,
        1e-6,
        1,
    );
    let names = ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"];
    for (model, names, nested) in [
        ("stribeck_exp", vec!["fc", "fs", "vs", "fv"], true),
        ("lugre", names.to_vec(), false),
        ("lugre", names.to_vec(), true),
    ] {
        let mut o = Options::new(model, &names);
        o.nested = nested;
        let t = std::time::Instant::now();
        let r = output_error::fit(std::slice::from_ref(&seg), &o).unwrap();
        println!(
            "{model} nested={nested}: mse {:?} iters {} evals {} {:.2}s term {:?} subst {:?}",
            r.mse,
            r.details["iterations"],
            r.details["evaluations"],
            t.elapsed().as_secs_f64(),
            r.termination,
            r.provenance.settings.get("substep_checks")
        );
        for n in names {
            let p = r.params[n].as_f64().unwrap();
            let se = r
                .std_errors
                .get(n)
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::NAN);
            if let Some(tv) = truth.get(n).and_then(|v| v.as_f64()) {
                println!(
                    "   {n}: {p:.6e} err {:.3}% = {:.2} se (se {se:.3e})",
                    100.0 * (p / tv - 1.0),
                    (p - tv) / se
                );
            } else {
                println!("   {n}: {p}");
            }
        }
        println!(
            "   n_eff {:?} nested {}",
            r.n_eff,
            r.details
                .get("nested")
                .map(|v| v.to_string())
                .unwrap_or_default()
        );
    }
}
