//! The file floors inside every crate of the workspace: no module reaches itself through its
//! siblings. Cargo keeps the crates apart (a crate cannot name one above it); this test does the
//! same for the modules of each directory, read from the source (code, not comments or test
//! modules): a module of a directory names a sibling by `super::x`, `self::x` or
//! `crate::path::x`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, by their source root.
const CRATES: [&str; 10] = [
    "friction",
    "protocols",
    "experiments",
    "run-store",
    "bench-sim",
    "bench-daemon",
    "recording-import",
    "campaign",
    "bench-service",
    "bench-cli",
];

/// A module path from the crate root (`["serve", "scheduler"]`); the root is empty.
type ModPath = Vec<String>;

/// Every module of a crate whose file is `src/…`, with the text of its own file (without its
/// inline `#[cfg(test)]` module, whose `super::` is the file itself).
fn modules(src: &Path) -> BTreeMap<ModPath, String> {
    let mut out = BTreeMap::new();
    walk(src, &mut Vec::new(), &mut out);
    out
}

fn walk(dir: &Path, at: &mut ModPath, out: &mut BTreeMap<ModPath, String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            at.push(stem);
            walk(&path, at, out);
            at.pop();
            continue;
        }
        // Test modules (`tests.rs`, `*_tests.rs`) may reach anywhere: they are not a floor.
        if path.extension().is_none_or(|e| e != "rs") || stem == "tests" || stem.ends_with("_tests")
        {
            continue;
        }
        let mut module = at.clone();
        let root = at.is_empty() && ["lib", "main"].contains(&stem.as_str());
        if !root && stem != "mod" {
            module.push(stem);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let own = match text.find("#[cfg(test)]\nmod tests") {
            Some(k) => &text[..k],
            None => &text,
        };
        // Comments name modules without depending on them (a doc link to the layer above).
        for line in own.lines() {
            let code = line.split("//").next().unwrap_or_default();
            let entry = out.entry(module.clone()).or_default();
            entry.push_str(code);
            entry.push('\n');
        }
    }
}

/// The module paths `text` (the file of `module`) names: `crate::a::b`, `super::a`,
/// `self::a`, one brace group deep (`crate::{a, b::c}`).
fn named(module: &ModPath, text: &str) -> Vec<ModPath> {
    let path_chars = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in ["crate::", "super::", "self::"]
        .iter()
        .flat_map(|p| text.match_indices(p))
    {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest: String = text[at..].chars().take_while(|c| path_chars(*c)).collect();
        let mut segments: Vec<&str> = rest.split("::").filter(|s| !s.is_empty()).collect();
        let mut base = match segments.first() {
            Some(&"crate") => Vec::new(),
            _ => module.clone(),
        };
        if matches!(segments.first(), Some(&"crate" | &"self")) {
            segments.remove(0);
        }
        while segments.first() == Some(&"super") {
            segments.remove(0);
            base.pop();
        }
        let after = &text[at + rest.len()..];
        let heads: Vec<ModPath> = match after.strip_prefix('{') {
            Some(group) if segments.is_empty() || rest.ends_with("::") => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                group
                    .split(',')
                    .map(|item| {
                        let item: String =
                            item.trim().chars().take_while(|c| path_chars(*c)).collect();
                        item.split("::")
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect()
                    })
                    .collect()
            }
            _ => vec![Vec::new()],
        };
        for head in heads {
            let mut full = base.clone();
            full.extend(segments.iter().map(|s| s.to_string()));
            full.extend(head);
            out.push(full);
        }
    }
    out
}

/// For each directory module `parent`, the edges between its children: child `a` (or anything
/// in it) names child `b` (or anything in it).
fn floors(
    mods: &BTreeMap<ModPath, String>,
) -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let mut out: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, text) in mods {
        for target in named(module, text) {
            // The deepest common directory of the two, and the child of it each lies in.
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let (Some(from), Some(to)) = (module.get(common), target.get(common)) else {
                continue;
            };
            let parent = module[..common].to_vec();
            let known = |child: &String| {
                mods.keys()
                    .any(|m| m.len() > common && m[..common] == parent[..] && &m[common] == child)
            };
            if from != to && known(to) {
                out.entry(parent)
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .insert(to.clone());
            }
        }
    }
    out
}

/// A child that reaches itself through the edges, if any.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        at: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(k) = path.iter().position(|p| p == at) {
            let mut c = path[k..].to_vec();
            c.push(at.to_string());
            return Some(c);
        }
        if !done.insert(at.to_string()) {
            return None;
        }
        path.push(at.to_string());
        for next in g.get(at).into_iter().flatten() {
            if let Some(c) = visit(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(graph, m, &mut Vec::new(), &mut done))
}

/// Every circle of the workspace, as `crate: a::b -> a::c -> a::b`.
fn circles() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in CRATES {
        let mods = modules(&root.join(krate).join("src"));
        for (parent, graph) in floors(&mods) {
            if let Some(c) = circle(&graph) {
                let at = parent.iter().map(|p| format!("{p}::")).collect::<String>();
                let c: Vec<String> = c.iter().map(|m| format!("{at}{m}")).collect();
                found.push(format!("{krate}: {}", c.join(" -> ")));
            }
        }
    }
    found
}

#[test]
fn no_module_of_any_crate_imports_its_way_back_to_itself() {
    let found = circles();
    assert!(found.is_empty(), "circles:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_a_circle_when_there_is_one() {
    let mut mods = BTreeMap::new();
    let m = |s: &str| s.split("::").map(String::from).collect::<ModPath>();
    mods.insert(m("a::x"), "use super::y::f;".to_string());
    mods.insert(m("a::y"), "use crate::a::{z, w};".to_string());
    mods.insert(m("a::z"), "fn g() { crate::a::x::h() }".to_string());
    mods.insert(m("b"), "use crate::a::x;".to_string());
    let graph = floors(&mods);
    assert_eq!(
        circle(&graph[&m("a")]),
        Some(m("x::y::z::x").into_iter().collect())
    );
    assert_eq!(
        circle(&graph[&Vec::new()]),
        None,
        "b names a, a names nothing above"
    );
}
