//! `bench completions SHELL` and `bench man`: generated from the command line, so they name
//! every subcommand and flag the binary has.

use crate::util::{bench, stderr, stdout};

#[test]
fn completions_name_the_subcommands_and_flags_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_bench()"),
        ("zsh", "#compdef bench"),
        ("fish", "complete -c bench"),
    ] {
        let o = bench(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(300)]
        );
        assert!(text.contains("serve") && text.contains("format"), "{shell}");
    }
    let o = bench(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

#[test]
fn man_prints_the_page_or_writes_one_per_subcommand() {
    let o = bench(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(
        page.contains(".TH bench 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    assert!(page.contains("completions"));

    let dir = tempfile::tempdir().unwrap();
    let o = bench(&["man", "--out", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let export = std::fs::read_to_string(dir.path().join("bench-runs-export.1")).unwrap();
    assert!(
        export.contains("parquet") && export.contains("\\-\\-units"),
        "{export}"
    );
    assert!(dir.path().join("bench-serve.1").is_file());
}
