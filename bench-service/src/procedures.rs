//! `GET /api/procedures`: the identification procedures as the registry declares them
//! (`friction::identify::procedures::PROCEDURES`), for front ends that build a fit form: which
//! runs each reads, which models it fits, whether it iterates or takes an offset, its options.

use super::error::ApiResult;
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use friction::identify::procedures::{PROCEDURES, Procedure};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/procedures",
        get_with(list, |op| {
            op.summary("Every identification procedure: the run kinds and part it reads, the models it fits, whether it iterates from start values or takes an offset, and its options as JSON Schema")
        }),
    )
}

/// One procedure as a front end needs it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcedureInfo {
    /// Its name (`procedure` of `POST /api/fits`).
    pub id: String,
    /// Model ids it fits; `["*"]`: any model of `GET /api/models`.
    pub models: Vec<String>,
    /// Columns of the data it reads.
    pub columns: Vec<String>,
    /// Run kinds it reads (an imported recording is read whatever the list says).
    pub run_kinds: Vec<String>,
    /// Of a run of several parts, the part it reads by default: `name` and segment `roles`.
    pub part: Option<PartInfo>,
    /// Whether it iterates from start values (`given.params`).
    pub iterates: bool,
    /// Whether it takes `given.offset` (true: fitted; a number: known).
    pub offset: bool,
    /// Why it takes no offset, where that matters.
    pub offset_refused: Option<String>,
    /// Whether it takes the model's parameters in `given` as known values (held fixed).
    pub known_params: bool,
    /// Its `given` keys as a JSON Schema object: each option's type, bounds or `enum`, `default`,
    /// `description` and unit (`x-unit`); unknown keys are refused.
    pub options: Value,
}

/// A part of a run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PartInfo {
    /// As notes and errors name it.
    pub name: String,
    /// The roles of its segments.
    pub roles: Vec<String>,
}

async fn list() -> ApiResult<Json<Vec<ProcedureInfo>>> {
    Ok(Json(PROCEDURES.iter().map(info).collect()))
}

/// What the registry declares of `p`.
pub fn info(p: &Procedure) -> ProcedureInfo {
    let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let run_kinds = match p.reads.run_kinds() {
        Some(kinds) => strings(kinds),
        None => experiments::Kind::NAMES
            .iter()
            .chain([&run_store::IMPORTED_KIND])
            .map(|k| k.to_string())
            .collect(),
    };
    ProcedureInfo {
        id: p.name.into(),
        models: strings(p.models),
        columns: strings(p.columns),
        run_kinds,
        part: p.part.map(|part| PartInfo {
            name: part.name.into(),
            roles: strings(part.roles),
        }),
        iterates: p.iterates,
        offset: p.takes("offset"),
        offset_refused: p.offset_refused.map(String::from),
        known_params: p.known_params,
        options: p.options.schema(p.known_params),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use friction::identify::procedures::procedure;
    use serde_json::json;

    /// What the registry declares reaches the answer: kinds (every kind for "any"), the part,
    /// iterating, the offset rule and the options.
    #[test]
    fn each_procedure_is_answered_as_the_registry_declares_it() {
        let idim = info(procedure("idim_ls").unwrap());
        assert!(idim.run_kinds.contains(&"imported".to_string()));
        assert!(idim.offset && !idim.iterates && idim.part.is_none());
        let asym = &idim.options["properties"]["asymmetric"];
        assert_eq!(
            (&asym["type"], &asym["default"]),
            (&json!("boolean"), &json!(false))
        );
        assert_eq!(idim.options["properties"]["j"]["x-unit"], "kg m² or kg");
        let rls = info(procedure("power_rls").unwrap());
        assert_eq!(
            rls.options["properties"]["eta"]["enum"],
            json!(["v2", "one", "threshold"])
        );
        let oe = info(procedure("output_error").unwrap());
        assert!(oe.iterates);
        assert_eq!(oe.run_kinds.len(), experiments::Kind::NAMES.len() + 1);
        let sine = info(procedure("presliding_sine").unwrap());
        assert_eq!(sine.part.unwrap().roles, ["torque_sine"]);
        let step = info(procedure("step_damping").unwrap());
        assert!(!step.offset && step.offset_refused.is_some());
        let j = &step.options["properties"]["j"];
        assert_eq!(
            (&j["type"], &j["exclusiveMinimum"]),
            (&json!("number"), &json!(0))
        );
        assert_eq!(step.options["additionalProperties"], false);
        let phi = info(procedure("phi_s").unwrap());
        assert_eq!(phi.run_kinds, ["torque_ramp"]);
        assert!(phi.offset && phi.known_params);
        assert_eq!(phi.options["additionalProperties"], true);
        assert_eq!(phi.options["properties"]["offset"]["default"], false);
    }
}
