//! What each fit of a campaign's order is given (`bench fit --given`), typed per procedure:
//! the keys the procedure registry declares for it (`friction::identify::procedures`,
//! `GET /api/procedures`). The fit request takes them as its JSON object ([`Given::to_map`]);
//! the registry's own check refuses a key it does not declare before the fit runs.

use serde::Serialize;
use serde_json::{Map, Value};

/// The given of one fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Given {
    /// `static_curve`: known values held fixed.
    StaticCurve(Held),
    /// `output_error`: which parameters it fits (the rest held at the set before it), and its
    /// iteration cap.
    OutputError {
        /// The parameters fitted.
        fit: Vec<&'static str>,
        /// Its iteration cap.
        max_iters: u32,
        /// Start values (the set of the fit before it), in place of the bench's newest static
        /// and presliding sets.
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<Map<String, Value>>,
    },
    /// `maxwell_slip`: the static curve's swing `fs⁺ + fs⁻`, against which it judges the
    /// reversal curves' plateau.
    MaxwellSlip {
        /// The swing \[N m\].
        static_swing: f64,
    },
}

/// Known values of a static fit: `fs` per direction, the shape and, when known, `vs`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Held {
    /// Breakaway level, positive direction \[N m\].
    pub fs: f64,
    /// Shape exponent.
    pub delta: f64,
    /// Stribeck velocity \[rad/s\].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs: Option<f64>,
    /// The negative direction's.
    pub negative: HeldNegative,
}

/// Known values of the negative direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeldNegative {
    /// Breakaway level \[N m\] (magnitude).
    pub fs: f64,
    /// Shape exponent, when the sliding phases placed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
}

impl Given {
    /// The object the fit request takes.
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use friction::identify::procedures::procedure;

    /// Each given the campaign writes is one the registry declares for its procedure: a key
    /// renamed on either side fails here, not in the middle of a campaign.
    #[test]
    fn every_given_is_what_the_registry_declares_for_its_procedure() {
        let held = Held {
            fs: 1.2,
            delta: 2.0,
            vs: Some(0.05),
            negative: HeldNegative {
                fs: 1.1,
                delta: Some(2.0),
            },
        };
        let cases = [
            ("static_curve", "stribeck_exp", Given::StaticCurve(held)),
            (
                "output_error",
                "gms",
                Given::OutputError {
                    fit: vec!["vs", "sigma1", "c"],
                    max_iters: 30,
                    params: Some(Map::from_iter([("c".to_string(), Value::from(50.0))])),
                },
            ),
            (
                "maxwell_slip",
                "gms",
                Given::MaxwellSlip { static_swing: 2.2 },
            ),
        ];
        for (name, model, given) in cases {
            let p = procedure(name).unwrap();
            let map = given.to_map();
            p.check_given(model, &map)
                .unwrap_or_else(|e| panic!("{name}: {e}: {map:?}"));
        }
    }
}
