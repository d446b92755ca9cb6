//! The manual has a page for every experiment kind: `docs/src/experiments/<kind>.md` names
//! every parameter of the kind (as `` `name` ``) and is listed in `docs/src/SUMMARY.md`.

use experiments::Kind;
use std::path::PathBuf;

#[test]
fn every_kind_has_a_page_naming_its_parameters() {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/src");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap_or_default();
    let mut missing = Vec::new();
    for name in Kind::NAMES {
        let text = std::fs::read_to_string(docs.join(format!("experiments/{name}.md")))
            .unwrap_or_default();
        if text.is_empty() {
            missing.push(format!("{name}: no page docs/src/experiments/{name}.md"));
            continue;
        }
        if !summary.contains(&format!("(experiments/{name}.md)")) {
            missing.push(format!("{name}: page not listed in docs/src/SUMMARY.md"));
        }
        let kind = Kind::defaults(name).expect("a listed kind has defaults");
        for p in kind.param_names() {
            if !text.contains(&format!("`{p}`")) {
                missing.push(format!("{name}: parameter `{p}` not on its page"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "manual incomplete:\n{}",
        missing.join("\n")
    );
}
