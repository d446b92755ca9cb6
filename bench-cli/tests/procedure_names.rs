//! One registry of procedures (docs/src/contributing.md, "Adding an identification procedure"):
//! the front ends that fit (the daemon's fitting, `bench fit`, the service) read what a
//! procedure declares in `friction::identify::procedures::PROCEDURES` and keep no list of names
//! of their own, so that adding a procedure is its file and one registry line. Read from the
//! source: code, not comments or test modules.

use friction::identify::procedures::PROCEDURES;
use std::path::{Path, PathBuf};

/// The sources that must name no procedure, from the workspace root.
const FRONT_ENDS: [&str; 3] = [
    "bench-daemon/src/fitting",
    "bench-cli/src/cli/fit.rs",
    "bench-service/src",
];

fn rust_files(at: &Path, out: &mut Vec<PathBuf>) {
    if at.is_file() {
        out.push(at.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(at).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "test.rs" {
            out.push(path);
        }
    }
}

/// The code of a file: without its `#[cfg(test)]` module and its comment lines.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `"name"` of a registered procedure in `text`.
fn named(text: &str) -> Vec<&'static str> {
    PROCEDURES
        .iter()
        .map(|p| p.name)
        .filter(|n| text.contains(&format!("\"{n}\"")))
        .collect()
}

#[test]
fn no_front_end_keeps_a_list_of_procedure_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for at in FRONT_ENDS {
        rust_files(&root.join(at), &mut files);
    }
    assert!(files.len() > 20, "{files:?}");
    let offenders: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let found = named(&code(&std::fs::read_to_string(f).unwrap()));
            (!found.is_empty()).then(|| format!("{}: {found:?}", f.display()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "procedure names kept outside the registry (read what the procedure declares instead):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_scan_sees_a_name_in_code_and_not_in_comments_or_tests() {
    assert_eq!(
        named(&code("if p == \"presliding_sine\" {}")),
        ["presliding_sine"]
    );
    assert!(named(&code("// \"idim_ls\" reads\nlet x = 1;")).is_empty());
    assert!(named(&code("fn a() {}\n#[cfg(test)]\nmod t { \"aep\" }")).is_empty());
}
