//! The manual has a page for every model and a section for every identification procedure:
//! `docs/src/models/<id>.md` names every parameter of the model (as `` `name` ``), and is
//! listed in `docs/src/SUMMARY.md`; `docs/src/identification.md` has a heading per procedure.

use friction::identify::procedures::PROCEDURES;
use friction::registry::MODELS;
use std::path::PathBuf;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/src")
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn every_model_has_a_page_naming_its_parameters() {
    let summary = read(&docs().join("SUMMARY.md"));
    let mut missing = Vec::new();
    for entry in MODELS {
        let page = docs().join(format!("models/{}.md", entry.id));
        let text = read(&page);
        if text.is_empty() {
            missing.push(format!(
                "{}: no page docs/src/models/{}.md",
                entry.id, entry.id
            ));
            continue;
        }
        if !summary.contains(&format!("(models/{}.md)", entry.id)) {
            missing.push(format!(
                "{}: page not listed in docs/src/SUMMARY.md",
                entry.id
            ));
        }
        for p in entry.params {
            if !text.contains(&format!("`{}`", p.name)) {
                missing.push(format!(
                    "{}: parameter `{}` not on its page",
                    entry.id, p.name
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "manual incomplete:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_procedure_has_a_section_and_is_named_on_its_models_pages() {
    let text = read(&docs().join("identification.md"));
    let mut missing = Vec::new();
    for p in PROCEDURES {
        let heading = text
            .lines()
            .any(|l| l.starts_with('#') && l.contains(&format!("`{}`", p.name)));
        if !heading {
            missing.push(format!(
                "procedure {}: no heading in docs/src/identification.md",
                p.name
            ));
        }
        for m in p.models.iter().filter(|m| **m != "*") {
            let page = read(&docs().join(format!("models/{m}.md")));
            if !page.contains(&format!("`{}`", p.name)) {
                missing.push(format!(
                    "procedure {}: not named on docs/src/models/{m}.md",
                    p.name
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "manual incomplete:\n{}",
        missing.join("\n")
    );
}
