//! A model's step allocates nothing: the control loop steps every model each period, and an
//! allocation there is a trip into the allocator's locks at the moment the next command is due.

use crate::util::model;
use friction::Input;
use friction::registry::MODELS;
use serde_json::json;

#[test]
fn no_model_allocates_in_its_step() {
    let mut allocating = Vec::new();
    for e in MODELS {
        let mut m = model(e.id, json!({}));
        let dt = 1e-3;
        // A back-and-forth through sticking and sliding, both directions.
        let input = |k: u32| {
            let t = f64::from(k) * dt;
            let v = 0.3 * (2.0 * std::f64::consts::PI * t).sin();
            Input {
                t,
                x: -0.3 / (2.0 * std::f64::consts::PI) * (2.0 * std::f64::consts::PI * t).cos(),
                v,
                u: 0.5 * v.signum(),
                du_dt: 0.0,
            }
        };
        for k in 0..100 {
            m.step(&input(k), dt);
        }
        let info = allocation_counter::measure(|| {
            for k in 100..2100 {
                m.step(&input(k), dt);
            }
        });
        if info.count_total > 0 {
            allocating.push((e.id, info.count_total));
        }
    }
    assert!(
        allocating.is_empty(),
        "allocations in 2000 steps: {allocating:?}"
    );
}
