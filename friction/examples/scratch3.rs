use friction::identify::procedures::{self, Given, Table};
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let table = Table::from_csv(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let sets = [(
        "published",
        json!({"fc": 20.3935, "fv": 203.5034, "mass": 95.1089, "offset": -3.1648}),
    )];
    for extra in args.iter().skip(2) {
        let _ = extra;
    }
    let mut all: Vec<(String, serde_json::Value)> = sets
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    let mut g = Given::new();
    g.insert("offset".into(), json!(true));
    for p in ["idim_ls", "power_rls"] {
        let r = procedures::run(p, "coulomb_viscous", &table, &g).unwrap();
        all.push((p.into(), json!({"fc": r.params["fc"], "fv": r.params["fv"], "mass": r.params["j"], "offset": r.params["offset"]})));
    }
    for (name, set) in all {
        for hold in ["zoh", "linear"] {
            let mut given = Given::new();
            given.insert("fit".into(), json!([]));
            given.insert("replay".into(), json!("torque"));
            given.insert("mass".into(), set["mass"].clone());
            given.insert("hold".into(), json!(hold));
            given.insert(
                "params".into(),
                json!({"fc": set["fc"], "fv": set["fv"], "offset": set["offset"]}),
            );
            let r = procedures::run("output_error", "coulomb_viscous", &table, &given).unwrap();
            println!(
                "{name} {hold}: rmse {:.6e} m  substeps {} r2 {:?}",
                r.mse.unwrap().sqrt(),
                r.provenance.settings["substeps"],
                r.r2
            );
        }
    }
}
