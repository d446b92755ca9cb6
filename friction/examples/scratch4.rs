use friction::identify::procedures::output_error::{self, Options, Segment};
use friction::registry::{ModelSpec, build_model};
use serde_json::json;
use std::f64::consts::TAU;
fn short_excitation(t: f64) -> f64 {
    if t < 1.0 {
        let (a, w) = (5e-6 + 15e-6 * t, TAU * 4.0);
        a * w * (w * t).cos() + 15e-6 * (w * t).sin()
    } else if t < 2.0 {
        0.01 * (TAU * (t - 1.0)).sin()
    } else {
        0.3 * (TAU * (t - 2.0)).sin()
    }
}
fn main() {
    let truth =
        json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let names = ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"];
    let t0 = std::time::Instant::now();
    let mut segs = vec![];
    for seed in 0..10 {
        let mut m = build_model(&ModelSpec {
            model: "lugre".into(),
            params: truth.clone(),
        })
        .unwrap();
        segs.push(Segment::sample_velocity_driven(
            "c",
            m.as_mut(),
            short_excitation,
            1e-3,
            3000,
            100,
            0.01,
            0.0,
            seed,
        ));
    }
    println!("gen {:.3}s", t0.elapsed().as_secs_f64());
    for nested in [false, true] {
        let t0 = std::time::Instant::now();
        let mut its = 0;
        let mut subs = vec![];
        for s in &segs {
            let mut o = Options::new("lugre", &names);
            o.nested = nested;
            let r = output_error::fit(std::slice::from_ref(s), &o).unwrap();
            its += r.details["iterations"].as_u64().unwrap();
            subs.push(r.provenance.settings["substeps"].clone());
        }
        println!(
            "nested {nested}: {:.3}s for 10, iters {its} substeps {:?}",
            t0.elapsed().as_secs_f64(),
            subs
        );
    }
}
