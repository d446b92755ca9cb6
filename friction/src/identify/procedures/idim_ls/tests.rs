use super::problem::{FC, FV, J, OFF, Problem, count, idx, ols};
use super::*;
use crate::identify::procedures::synthetic::BallScrew;
use nalgebra::DMatrix;

fn record(b: BallScrew) -> Table {
    b.simulate().unwrap()
}

#[test]
fn ols_matches_the_normal_equations() {
    let rec = record(BallScrew {
        duration: 8.0,
        ..BallScrew::default()
    });
    let (t, x, u) = (
        rec.get("t").unwrap(),
        rec.get("x").unwrap(),
        rec.get("u").unwrap(),
    );
    for asymmetric in [false, true] {
        let reg = regression(t, x, u, &Conditioning::default(), asymmetric).unwrap();
        let sides = reg.sides.len();
        let mut free = vec![J];
        for s in 0..sides {
            free.extend([idx(s, FV), idx(s, FC)]);
        }
        if !asymmetric {
            free.push(OFF);
        }
        let p = Problem {
            r: &reg,
            u: &reg.u,
            full: vec![0.0; count(sides)],
            free,
            stribeck: false,
            delta: 1.0,
        };
        let theta = ols(&p, &reg.u).unwrap();
        let w: DMatrix<f64> = p.jacobian_at(&p.full);
        let y = nalgebra::DVector::from_column_slice(&reg.u);
        let direct = (w.transpose() * &w).try_inverse().unwrap() * w.transpose() * y;
        for (a, b) in theta.iter().zip(direct.iter()) {
            assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} {b}");
        }
    }
}
