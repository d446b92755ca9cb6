//! Embeds the dashboard (`web/dist`, built by `npm run build`) into the `bench` binary, so an
//! installed binary serves it from any directory. Without a build the table is empty and
//! `bench serve` shows the "dashboard not built" page. Writes `$OUT_DIR/web_assets.rs`: a
//! sorted `(path, bytes)` table of `include_bytes!`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let web = manifest.join("..").join("web");
    let dist = web.join("dist");
    // A missing path would rerun this script on every build: watch `web/` until dist exists.
    let watched = if dist.is_dir() { &dist } else { &web };
    if watched.exists() {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    if dist.is_dir() {
        collect(&dist, &mut files);
    }
    // Sorted by the path string the server looks up (binary search).
    let mut table: Vec<(String, PathBuf)> = files
        .iter()
        .map(|file| {
            let rel: Vec<String> = file
                .strip_prefix(&dist)
                .expect("under dist")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (
                rel.join("/"),
                file.canonicalize().expect("a file just listed"),
            )
        })
        .collect();
    table.sort();
    let mut out = String::from("/// The embedded dashboard: (path under web/dist, contents).\n");
    out.push_str("pub static WEB_ASSETS: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &table {
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.to_string_lossy()
        );
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(target.join("web_assets.rs"), out).expect("OUT_DIR is writable");
}

/// Every regular file under `dir`.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.is_file() {
            files.push(path);
        }
    }
}
