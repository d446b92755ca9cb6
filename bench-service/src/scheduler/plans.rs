//! Specs checked against the bench: one spec document ([`check_value`], its errors naming the
//! field by its dotted path) and what a schedule entry runs ([`ScheduleBody`]: one spec, a
//! batch, or a sweep of one spec over a parameter's values, each expanded into checked plans;
//! or a characterisation campaign, whose request is checked and whose steps are designed as it
//! runs).

use super::error::SchedulerError;
use bench_daemon::config::Loaded;
use bench_daemon::session::{self, Checked};
use campaign::StartCampaign;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::borrow::Cow;

/// A spec document as a client sends it (`{"kind", "name", "params"}`, as `bench run` reads
/// it), kept as written until [`check_value`] checks it against the bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SpecDoc(pub Value);

impl JsonSchema for SpecDoc {
    fn schema_name() -> Cow<'static, str> {
        "Spec".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "description": "The spec document of `bench run` (see GET /api/experiments/kinds)",
            "required": ["kind"],
            "additionalProperties": false,
            "properties": {
                "kind": {"enum": experiments::Kind::NAMES},
                "name": {"type": ["string", "null"]},
                "params": {"type": ["object", "null"], "description": "null: the kind's defaults"},
            },
        })
    }
}

/// A parameter sweep: `spec` run once per value, each replacing what is at `param`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// The spec swept.
    pub spec: SpecDoc,
    /// Dotted path with optional `[i]` indices into the spec document, e.g.
    /// `params.velocities`, `params.settle_s` or `params.velocities.to`; each value replaces
    /// what is there (missing object keys are created).
    pub param: String,
    /// The values, one run each.
    #[schemars(length(min = 1, max = 1000))]
    pub values: Vec<Value>,
}

/// What a schedule entry runs, as it is stored: `{"spec": S}`, `{"batch": [S, ...]}`,
/// `{"sweep": {"spec": S, "param": PATH, "values": [...]}}` or
/// `{"campaign": {"models": [...], "budget_min": M}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleBody {
    /// One run.
    Spec(SpecDoc),
    /// One run per spec, in order.
    Batch(Vec<SpecDoc>),
    /// One run per value.
    Sweep(Sweep),
    /// A characterisation campaign, started as `POST /api/campaigns` starts one (its steps are
    /// designed as it goes: nothing is expanded ahead).
    Campaign(StartCampaign),
}

/// What a schedule entry runs each time it fires.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Planned {
    /// Runs it queues (0 for a campaign, whose steps are designed as it runs).
    pub runs: usize,
    /// Their estimated duration together (a campaign: its budget) \[s\].
    pub estimate_s: f64,
}

impl ScheduleBody {
    /// The body as the run store keeps it.
    pub fn stored(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A body the run store kept.
    pub fn from_stored(v: &Value) -> Result<ScheduleBody, String> {
        ScheduleBody::deserialize(v).map_err(|e| format!("a stored schedule body: {e}"))
    }

    /// Every spec checked against the bench, in order (none for a campaign, whose request is
    /// checked). Errors name the batch index or sweep value and the field.
    pub fn expand(&self, loaded: &Loaded) -> Result<Vec<Checked>, SchedulerError> {
        let mut out = Vec::new();
        self.each_checked(loaded, |c| {
            out.push(c);
            Ok(())
        })?;
        Ok(out)
    }

    /// Checks every spec as [`ScheduleBody::expand`] does, holding one plan at a time, and
    /// says how much the entry runs each time it fires.
    pub fn validate(&self, loaded: &Loaded) -> Result<Planned, SchedulerError> {
        let mut planned = Planned::default();
        self.each_checked(loaded, |c| {
            planned.runs += 1;
            planned.estimate_s += c.plan.estimate_duration();
            Ok(())
        })?;
        if let ScheduleBody::Campaign(c) = self {
            // Its steps are designed as it runs: its budget bounds its time.
            planned.estimate_s = c.request().map_or(0.0, |r| r.budget_min * 60.0);
        }
        Ok(planned)
    }

    /// Calls `each` with every checked spec, in order.
    fn each_checked(
        &self,
        loaded: &Loaded,
        mut each: impl FnMut(Checked) -> Result<(), SchedulerError>,
    ) -> Result<(), SchedulerError> {
        match self {
            ScheduleBody::Spec(spec) => each(check_value(&spec.0, loaded, "spec")?),
            ScheduleBody::Batch(list) => {
                if list.is_empty() || list.len() > MAX_EXPANDED {
                    return Err(SchedulerError::invalid(
                        "batch",
                        format!("batch must be a list of 1 to {MAX_EXPANDED} spec documents"),
                    ));
                }
                let mut total = Total::new(loaded, "batch");
                for (k, s) in list.iter().enumerate() {
                    each(total.add(check_value(&s.0, loaded, &format!("batch[{k}]"))?)?)?;
                }
                Ok(())
            }
            ScheduleBody::Sweep(sweep) => sweep.each_checked(loaded, each),
            ScheduleBody::Campaign(c) => match c.request() {
                Ok(_) => Ok(()),
                Err(e) => {
                    let field = format!("campaign.{}", e.field);
                    Err(SchedulerError::invalid(&field, format!("campaign.{e}")))
                }
            },
        }
    }
}

impl Sweep {
    fn each_checked(
        &self,
        loaded: &Loaded,
        mut each: impl FnMut(Checked) -> Result<(), SchedulerError>,
    ) -> Result<(), SchedulerError> {
        if self.values.is_empty() || self.values.len() > MAX_EXPANDED {
            return Err(SchedulerError::invalid(
                "sweep.values",
                format!("sweep.values must be a list of 1 to {MAX_EXPANDED} values"),
            ));
        }
        let param = &self.param;
        let mut total = Total::new(loaded, "sweep.values");
        for (k, v) in self.values.iter().enumerate() {
            let mut doc = self.spec.0.clone();
            set_path(&mut doc, param, v.clone()).map_err(|e| {
                SchedulerError::invalid("sweep.param", format!("sweep.param {param}: {e}"))
            })?;
            name_by_value(&mut doc, param, v);
            let label = format!("sweep.values[{k}]");
            each(total.add(check_value(&doc, loaded, &label)?)?)?;
        }
        Ok(())
    }
}

/// Names a sweep's run by its swept value, e.g. "quick sweep (velocities = [0.2])", so that
/// the runs of one sweep can be told apart in every list.
fn name_by_value(doc: &mut Value, param: &str, value: &Value) {
    const SHOWN: usize = 60;
    let Some(obj) = doc.as_object_mut() else {
        return;
    };
    let base = match obj.get("name").and_then(Value::as_str) {
        Some(name) => name.to_string(),
        None => obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("run")
            .to_string(),
    };
    let mut shown = value.to_string();
    if shown.chars().count() > SHOWN {
        shown = shown.chars().take(SHOWN).chain("…".chars()).collect();
    }
    let key = param.rsplit('.').next().unwrap_or(param);
    obj.insert("name".into(), json!(format!("{base} ({key} = {shown})")));
}

/// Most specs a batch or sweep expands to.
pub const MAX_EXPANDED: usize = 1000;

/// How many plans' worth of segments (the bench's per-plan cap) a batch or sweep may hold.
pub const EXPANDED_PLANS: usize = 2;

/// The segments of a batch or sweep together, capped at [`EXPANDED_PLANS`] times the bench's
/// per-plan segment cap: every expanded plan is held at once (and then queued), so the cap on
/// one plan alone would not bound them.
struct Total {
    segments: usize,
    cap: usize,
    field: &'static str,
}

impl Total {
    fn new(loaded: &Loaded, field: &'static str) -> Total {
        Total {
            segments: 0,
            cap: EXPANDED_PLANS * loaded.config.limits.max_plan_segments as usize,
            field,
        }
    }

    fn add(&mut self, checked: Checked) -> Result<Checked, SchedulerError> {
        self.segments += checked.plan.segments.len();
        if self.segments > self.cap {
            return Err(SchedulerError::invalid(
                self.field,
                format!(
                    "{}: the plans together have over {} segments, the cap ({EXPANDED_PLANS} \
                     times limits.max_plan_segments): split the entry",
                    self.field, self.cap
                ),
            ));
        }
        Ok(checked)
    }
}

/// Sets `value` at a dotted path with optional `[i]` indices (`params.velocities[2]`).
pub fn set_path(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        if key.is_empty() && rest.is_empty() {
            return Err("empty path segment".into());
        }
        if !key.is_empty() {
            steps.push(Err(key.to_string()));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let n: usize = idx
                .strip_suffix(']')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| format!("bad index [{idx}"))?;
            steps.push(Ok(n));
        }
    }
    let mut at = doc;
    for step in steps {
        at = match step {
            Err(key) => {
                if at.is_null() {
                    *at = json!({});
                }
                at.as_object_mut()
                    .ok_or_else(|| format!("{key}: not inside an object"))?
                    .entry(key)
                    .or_insert(Value::Null)
            }
            Ok(n) => at
                .as_array_mut()
                .and_then(|a| a.get_mut(n))
                .ok_or_else(|| format!("index {n} is not in a list"))?,
        };
    }
    *at = value;
    Ok(())
}

/// Checks a spec document against the bench limits; `prefix` (e.g. `batch[2]`) is put before
/// the field in errors. 422 naming the field for a value beyond a limit or breaking a rule.
pub fn check_value(v: &Value, loaded: &Loaded, prefix: &str) -> Result<Checked, SchedulerError> {
    let join = |field: &str| {
        if prefix.is_empty() || prefix == "spec" {
            field.to_string()
        } else {
            format!("{prefix}.{field}")
        }
    };
    let label = |msg: String| {
        if prefix.is_empty() || prefix == "spec" {
            msg
        } else {
            format!("{prefix}: {msg}")
        }
    };
    let spec_err = |e: experiments::Error| {
        if let experiments::Error::Field { field, message } = &e {
            // Named by its path under the entry's (`batch[1].params.amplitude: invalid type…`).
            let field = if field == "spec" && !prefix.is_empty() {
                prefix.to_string()
            } else {
                join(field)
            };
            let message = format!("{field}: {message}");
            return SchedulerError::Invalid { field, message };
        }
        let field = match &e {
            experiments::Error::Limit { field, .. } | experiments::Error::Invalid { field, .. } => {
                join(field)
            }
            _ => join("spec"),
        };
        SchedulerError::Invalid {
            field,
            message: label(e.to_string()),
        }
    };
    let spec = experiments::Spec::from_value(v.clone()).map_err(spec_err)?;
    spec.plan(&loaded.config.limits).map_err(spec_err)?;
    session::check_spec(spec, loaded).map_err(|e| SchedulerError::Invalid {
        field: join("spec"),
        message: label(e.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_spec() -> Value {
        serde_json::from_str(include_str!(
            "../../../experiments/specs/constant_velocity_sweep.json"
        ))
        .unwrap()
    }

    #[test]
    fn paths_set_keys_and_indices() {
        let mut doc = json!({"kind": "k", "params": {"v": [1, 2, 3]}});
        set_path(&mut doc, "params.v[1]", json!(9)).unwrap();
        set_path(&mut doc, "params.new.inner", json!(true)).unwrap();
        assert_eq!(doc["params"]["v"], json!([1, 9, 3]));
        assert_eq!(doc["params"]["new"]["inner"], json!(true));
        assert!(set_path(&mut doc, "params.v[7]", json!(0)).is_err());
        assert!(set_path(&mut doc, "kind.x", json!(0)).is_err());
        assert!(set_path(&mut doc, "", json!(0)).is_err());
    }

    #[test]
    fn a_body_is_stored_as_its_one_key_and_read_back() {
        let body = ScheduleBody::Sweep(Sweep {
            spec: SpecDoc(sweep_spec()),
            param: "params.settle_s".into(),
            values: vec![json!(0.5), json!(0.7)],
        });
        let stored = body.stored();
        assert_eq!(stored["sweep"]["param"], "params.settle_s");
        assert_eq!(stored.as_object().unwrap().len(), 1);
        assert_eq!(ScheduleBody::from_stored(&stored).unwrap(), body);
        assert!(ScheduleBody::from_stored(&json!({"spec": {}, "batch": []})).is_err());
    }

    #[test]
    fn a_sweep_expands_to_one_named_plan_per_value_and_names_the_bad_one() {
        let loaded = Loaded::sim("127.0.0.1:1");
        let sweep = |values: Vec<Value>| {
            ScheduleBody::Sweep(Sweep {
                spec: SpecDoc(sweep_spec()),
                param: "params.velocities".into(),
                values,
            })
        };
        let plans = sweep(vec![json!([0.2]), json!([0.4, 0.6])])
            .expand(&loaded)
            .unwrap();
        assert_eq!(plans.len(), 2);
        assert!(
            plans[1].plan.name.ends_with("(velocities = [0.4,0.6])"),
            "{}",
            plans[1].plan.name
        );
        match sweep(vec![json!([0.2]), json!([1.0, 25.0])]).validate(&loaded) {
            Err(SchedulerError::Invalid { field, .. }) => {
                assert_eq!(field, "sweep.values[1].params.velocities[1]")
            }
            other => panic!("{other:?}"),
        }
        match ScheduleBody::Batch(vec![]).validate(&loaded) {
            Err(SchedulerError::Invalid { field, .. }) => assert_eq!(field, "batch"),
            other => panic!("{other:?}"),
        }
    }

    /// The field of a spec that cannot be read comes from where the reader stopped: the
    /// unknown kind, the unknown or mistyped parameter, the missing kind, under the entry's
    /// prefix.
    #[test]
    fn an_unreadable_spec_names_its_field() {
        let loaded = Loaded::sim("127.0.0.1:1");
        let field = |doc: Value, prefix: &str| match check_value(&doc, &loaded, prefix) {
            Err(SchedulerError::Invalid { field, message }) => (field, message),
            other => panic!("{other:?}"),
        };
        let cases = [
            (json!({"kind": "torque_rmp"}), "spec", "kind"),
            (json!({"name": "x"}), "spec", "kind"),
            (
                json!({"kind": "torque_ramp", "colour": 1}),
                "spec",
                "colour",
            ),
            (
                json!({"kind": "torque_ramp", "params": {"rate": 1}}),
                "spec",
                "params.rate",
            ),
            (
                json!({"kind": "constant_velocity_sweep", "params": {"settle_s": "long"}}),
                "batch[2]",
                "batch[2].params.settle_s",
            ),
            (
                json!({"kind": "torque_ramp", "lockstep": 3}),
                "spec",
                "lockstep",
            ),
            (json!(["torque_ramp"]), "batch[1]", "batch[1]"),
            (json!(["torque_ramp"]), "spec", "spec"),
        ];
        for (doc, prefix, want) in cases {
            let (got, message) = field(doc.clone(), prefix);
            assert_eq!(got, want, "{doc} → {message}");
        }
        // The message leads with the field's whole path, from the typed error's parts.
        let (_, message) = field(
            json!({"kind": "torque_ramp", "params": {"rate": 1}}),
            "spec",
        );
        assert!(
            message.starts_with("params.rate: unknown field `rate`"),
            "{message}"
        );
        let (_, message) = field(
            json!({"kind": "constant_velocity_sweep", "params": {"settle_s": "long"}}),
            "batch[1]",
        );
        assert!(
            message.starts_with("batch[1].params.settle_s: invalid type: string \"long\""),
            "{message}"
        );
        let (_, message) = field(json!(["torque_ramp"]), "batch[1]");
        assert!(
            message.starts_with("batch[1]: a spec document"),
            "{message}"
        );
    }
}
