//! `bench runs tag ID +good -suspect` and `bench runs note ID "..."`: what a lab writes about a
//! run after it (docs/src/lab.md#tags-and-notes). Each edit goes into the audit log with the
//! old value, as an edit through `PATCH /api/runs/{id}` does.

use super::super::InputError;
use super::super::db::{DbArgs, open, store_error};
use run_store::{Annotated, Annotation, AuditEntry};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `bench runs tag`.
#[derive(Debug, clap::Args)]
pub struct TagArgs {
    /// Run id.
    id: i64,
    /// `+TAG` adds a tag, `-TAG` removes one (a bare `TAG` adds it).
    #[arg(value_name = "+TAG|-TAG", required = true, allow_hyphen_values = true)]
    tags: Vec<String>,
    #[command(flatten)]
    db: DbArgs,
    /// Print the run's tags and notes after the edit as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bench runs note`.
#[derive(Debug, clap::Args)]
pub struct NoteArgs {
    /// Run id.
    id: i64,
    /// The notes (replace the run's notes; "" clears them).
    text: String,
    #[command(flatten)]
    db: DbArgs,
    /// Print the run's tags and notes after the edit as JSON.
    #[arg(long)]
    json: bool,
}

/// `+a -b c` → the edit: add a and c, remove b.
pub fn tag_edit(words: &[String]) -> Result<Annotation, InputError> {
    let mut edit = Annotation::default();
    for w in words {
        match w.split_at_checked(1) {
            Some(("-", t)) => edit.remove.push(t.to_string()),
            Some(("+", t)) => edit.add.push(t.to_string()),
            _ => edit.add.push(w.clone()),
        }
    }
    for t in edit.add.iter().chain(&edit.remove) {
        run_store::check_tag(t).map_err(|e| InputError(format!("tag '{w}': {e}", w = t)))?;
    }
    Ok(edit)
}

/// Who edits from the command line: the system user, from the bench PC itself.
fn cli_entry(command: &str, id: i64) -> AuditEntry {
    AuditEntry {
        user: std::env::var("USER").ok().filter(|u| !u.is_empty()),
        remote: Some("cli".into()),
        method: command.into(),
        path: format!("/api/runs/{id}"),
        status: 200,
        allowed: true,
        ..AuditEntry::default()
    }
}

/// Runs `bench runs tag`.
pub async fn tag(args: &TagArgs) -> anyhow::Result<()> {
    let (words, db, json) = flags_among_tags(&args.tags)?;
    let edit = tag_edit(&words)?;
    let db = DbArgs {
        db: db.or_else(|| args.db.db.clone()),
    };
    apply(&db, args.id, &edit, "bench runs tag", args.json || json).await
}

/// `-suspect` must reach the tag list, so the list takes words that start with '-', and with
/// them the flags written after it (`bench runs tag ID +good -suspect --db PATH --json`): they
/// are taken back out here.
fn flags_among_tags(words: &[String]) -> Result<(Vec<String>, Option<PathBuf>, bool), InputError> {
    let (mut tags, mut db, mut json) = (Vec::new(), None, false);
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--json" => json = true,
            "--db" => {
                let path = it
                    .next()
                    .ok_or_else(|| InputError("--db: give a PATH".into()))?;
                db = Some(PathBuf::from(path));
            }
            _ if w.starts_with("--db=") => db = Some(PathBuf::from(&w["--db=".len()..])),
            _ if w.starts_with("--") => {
                return Err(InputError(format!(
                    "{w}: no such option of bench runs tag (--db, --json)"
                )));
            }
            _ => tags.push(w.clone()),
        }
    }
    if tags.is_empty() {
        return Err(InputError("give at least one +TAG or -TAG".into()));
    }
    Ok((tags, db, json))
}

/// Runs `bench runs note`.
pub async fn note(args: &NoteArgs) -> anyhow::Result<()> {
    let edit = Annotation {
        notes: Some(args.text.clone()),
        ..Annotation::default()
    };
    apply(&args.db, args.id, &edit, "bench runs note", args.json).await
}

async fn apply(
    db: &DbArgs,
    id: i64,
    edit: &Annotation,
    command: &str,
    json: bool,
) -> anyhow::Result<()> {
    let store = open(db).await?;
    let (_, after) = store
        .annotate(id, edit, cli_entry(command, id))
        .await
        .map_err(store_error)?;
    print(&after, json)
}

fn print(a: &Annotated, json: bool) -> anyhow::Result<()> {
    let mut w = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut w, a)?;
        writeln!(w)?;
    } else {
        writeln!(w, "tags:  {}", a.tags.join(" "))?;
        writeln!(w, "notes: {}", a.notes.as_deref().unwrap_or("-"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tag_edit;

    #[test]
    fn signs_add_and_remove() {
        let words = ["+good", "-suspect", "night"].map(String::from);
        let e = tag_edit(&words).unwrap();
        assert_eq!(e.add, ["good", "night"]);
        assert_eq!(e.remove, ["suspect"]);
        let bad = tag_edit(&["+two words".to_string()]).unwrap_err();
        assert!(bad.0.contains("tag 'two words'"), "{}", bad.0);
        assert!(tag_edit(&["+".to_string()]).is_err());
        let words = ["+a", "--db", "x.db", "-b", "--json"].map(String::from);
        let (tags, db, json) = super::flags_among_tags(&words).unwrap();
        assert_eq!(
            (tags, db, json),
            (
                vec!["+a".to_string(), "-b".into()],
                Some("x.db".into()),
                true
            )
        );
        assert!(super::flags_among_tags(&["--bogus".to_string()]).is_err());
    }
}
