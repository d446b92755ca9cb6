//! What a lab writes about its runs after the fact, and who did what: a run's tags and notes
//! (edited at any time, the old value kept in the audit log) and the append-only audit log of
//! every mutating request.

use crate::backend::{now_text, on};
use crate::{Error, Store};
use serde::{Deserialize, Serialize};

/// Longest tag \[characters\].
pub const MAX_TAG_CHARS: usize = 64;
/// Most tags on one run.
pub const MAX_TAGS: usize = 32;
/// Longest notes \[bytes\].
pub const MAX_NOTES_BYTES: usize = 64 * 1024;

/// An edit of a run's tags and notes; what is `None` stays as it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    /// Tags to add.
    #[serde(default)]
    pub add: Vec<String>,
    /// Tags to remove (absent ones are ignored).
    #[serde(default)]
    pub remove: Vec<String>,
    /// The whole tag list instead (`add`/`remove` then apply to it).
    #[serde(default)]
    pub set: Option<Vec<String>>,
    /// New notes (`Some("")` clears them).
    #[serde(default)]
    pub notes: Option<String>,
}

/// A run's tags and notes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotated {
    /// Tags, sorted.
    pub tags: Vec<String>,
    /// Notes, if any.
    pub notes: Option<String>,
}

/// Refuses a tag that is empty, too long or has characters beyond ASCII letters, digits and `._:-`
/// (`+good` and `-suspect` on the command line add and remove; a tag itself has no sign).
pub fn check_tag(tag: &str) -> Result<(), Error> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "._:-".contains(c);
    let rule = if tag.is_empty() {
        Some("must not be empty".to_string())
    } else if tag.chars().count() > MAX_TAG_CHARS {
        Some(format!("must have at most {MAX_TAG_CHARS} characters"))
    } else if !tag.chars().all(ok_char) {
        Some("may hold letters, digits and . _ : - only".into())
    } else if tag.starts_with('-') {
        Some("must not start with '-'".into())
    } else {
        None
    };
    match rule {
        Some(rule) => Err(Error::InvalidInput {
            field: "tags",
            value: tag.to_string(),
            rule,
        }),
        None => Ok(()),
    }
}

impl Annotation {
    /// The tags and notes after this edit of `before`, checked whole before anything is stored.
    pub fn apply(&self, before: &Annotated) -> Result<Annotated, Error> {
        let mut tags = self.set.clone().unwrap_or_else(|| before.tags.clone());
        for t in self.set.iter().flatten().chain(&self.add) {
            check_tag(t)?;
        }
        tags.extend(self.add.iter().cloned());
        tags.retain(|t| !self.remove.contains(t));
        tags.sort();
        tags.dedup();
        if tags.len() > MAX_TAGS {
            return Err(Error::InvalidInput {
                field: "tags",
                value: tags.len().to_string(),
                rule: format!("a run takes at most {MAX_TAGS} tags"),
            });
        }
        let notes = match &self.notes {
            None => before.notes.clone(),
            Some(n) if n.len() > MAX_NOTES_BYTES => {
                return Err(Error::InvalidInput {
                    field: "notes",
                    value: format!("{} bytes", n.len()),
                    rule: format!("must be at most {MAX_NOTES_BYTES} bytes"),
                });
            }
            Some(n) if n.trim().is_empty() => None,
            Some(n) => Some(n.clone()),
        };
        Ok(Annotated { tags, notes })
    }
}

crate::rows::from_row! {
    /// One entry of the audit log.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct AuditEntry {
        /// Entry id (in order of appending).
        #[serde(default)]
        pub id: i64,
        /// When (RFC 3339 UTC; set by the store).
        #[serde(default)]
        pub at: String,
        /// The bench whose daemon answered.
        pub bench_id: String,
        /// Who (`None`: no user could be told, e.g. no token given).
        pub user as "user_name": Option<String>,
        /// Their role (`viewer`, `operator`, `admin`).
        pub role: Option<String>,
        /// The client's address, or `cli` for a command run on the bench PC.
        pub remote: Option<String>,
        /// HTTP method (or the command, for the CLI).
        pub method: String,
        /// Request path.
        pub path: String,
        /// The run the request touched.
        pub run_id: Option<i64>,
        /// The schedule entry it touched.
        pub schedule_id: Option<i64>,
        /// The answer's status code.
        pub status: i32,
        /// Whether it was let through.
        pub allowed: bool,
        /// What changed (e.g. old and new tags), as JSON text.
        pub detail: Option<String>,
    }
}

/// Which audit entries to list.
#[derive(Clone, Debug, Default)]
pub struct AuditFilter {
    /// At or after (RFC 3339 UTC or a date).
    pub since: Option<String>,
    /// Only this user.
    pub user: Option<String>,
    /// Most entries, newest first (at most 10 000; default 1000).
    pub limit: Option<u32>,
}

/// Inserts `$entry` through `$exec` (a pool or a transaction); evaluates to its id.
macro_rules! insert_audit {
    ($exec:expr, $entry:expr) => {{
        let e: &AuditEntry = $entry;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO audit_log (at, bench_id, user_name, role, remote, method, path, run_id,
                 schedule_id, status, allowed, detail)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind(now_text())
        .bind(&e.bench_id)
        .bind(&e.user)
        .bind(&e.role)
        .bind(&e.remote)
        .bind(&e.method)
        .bind(&e.path)
        .bind(e.run_id)
        .bind(e.schedule_id)
        .bind(e.status)
        .bind(e.allowed)
        .bind(&e.detail)
        .fetch_one($exec)
        .await?;
        id
    }};
}

impl Store {
    /// A run's tags and notes.
    pub async fn annotations(&self, id: i64) -> Result<Annotated, Error> {
        self.require_run(id).await?;
        let notes: Option<String> = on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT operator_note FROM runs WHERE id = $1")
                .bind(id)
                .fetch_one(p)
                .await?
        });
        let tags = self.tags_of(id).await?;
        Ok(Annotated { tags, notes })
    }

    /// A run's tags, sorted (none for an unknown run).
    pub(crate) async fn tags_of(&self, id: i64) -> Result<Vec<String>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT tag FROM run_tags WHERE run_id = $1 ORDER BY tag")
                .bind(id)
                .fetch_all(p)
                .await?
        }))
    }

    /// Edits a run's tags and notes in one transaction, with an audit entry (`entry`, its
    /// `detail` set here to the old and new values); returns (before, after). A refused edit
    /// changes nothing.
    pub async fn annotate(
        &self,
        id: i64,
        edit: &Annotation,
        entry: AuditEntry,
    ) -> Result<(Annotated, Annotated), Error> {
        let before = self.annotations(id).await?;
        let after = edit.apply(&before)?;
        let detail = serde_json::json!({ "before": before, "after": after });
        let entry = AuditEntry {
            run_id: Some(id),
            detail: Some(detail.to_string()),
            ..entry
        };
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            sqlx::query("UPDATE runs SET operator_note = $1 WHERE id = $2")
                .bind(&after.notes)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM run_tags WHERE run_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            for tag in &after.tags {
                sqlx::query("INSERT INTO run_tags (run_id, tag) VALUES ($1, $2)")
                    .bind(id)
                    .bind(tag)
                    .execute(&mut *tx)
                    .await?;
            }
            insert_audit!(&mut *tx, &entry);
            tx.commit().await?;
        });
        Ok((before, after))
    }

    /// Appends an entry to the audit log; returns its id.
    pub async fn append_audit(&self, entry: &AuditEntry) -> Result<i64, Error> {
        Ok(on!(self.writer(), |p, DB| insert_audit!(p, entry)))
    }

    /// Audit entries, newest first.
    pub async fn audit_log(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, Error> {
        let limit = i64::from(filter.limit.unwrap_or(1000).min(10_000));
        // Stored times are `YYYY-MM-DDTHH:MM:SS.mmmZ`: a date compares right once written so.
        let since = filter
            .since
            .as_deref()
            .map(|s| crate::store::normalise_time("since", s))
            .transpose()?;
        let rows: Vec<AuditEntry> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, at, bench_id, user_name, role, remote, method, path, run_id,
                     schedule_id, status, allowed, detail
                 FROM audit_log
                 WHERE ($1 IS NULL OR at >= $1) AND ($2 IS NULL OR user_name = $2)
                 ORDER BY id DESC LIMIT $3",
            )
            .bind(&since)
            .bind(&filter.user)
            .bind(limit)
            .fetch_all(p)
            .await?
        });
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn edits_add_remove_and_replace_tags_and_notes() {
        let before = Annotated {
            tags: tags(&["good", "night"]),
            notes: Some("bearing re-greased".into()),
        };
        let edit = Annotation {
            add: tags(&["regreased", "good"]),
            remove: tags(&["night", "absent"]),
            ..Annotation::default()
        };
        let after = edit.apply(&before).unwrap();
        assert_eq!(after.tags, tags(&["good", "regreased"]));
        assert_eq!(after.notes, before.notes);
        let cleared = Annotation {
            set: Some(vec![]),
            notes: Some("  ".into()),
            ..Annotation::default()
        };
        assert_eq!(cleared.apply(&before).unwrap(), Annotated::default());
    }

    #[test]
    fn bad_tags_and_notes_are_refused_naming_the_rule() {
        let refuse = |edit: Annotation| edit.apply(&Annotated::default()).unwrap_err().to_string();
        let add = |t: &str| Annotation {
            add: tags(&[t]),
            ..Annotation::default()
        };
        assert!(refuse(add("")).contains("empty"));
        assert!(refuse(add("two words")).contains("letters, digits"));
        assert!(refuse(add("-x")).contains("'-'"));
        assert!(refuse(add(&"x".repeat(65))).contains("64"));
        let many = Annotation {
            add: (0..33).map(|i| format!("t{i}")).collect(),
            ..Annotation::default()
        };
        assert!(refuse(many).contains("32"));
        let long = Annotation {
            notes: Some("x".repeat(MAX_NOTES_BYTES + 1)),
            ..Annotation::default()
        };
        assert!(refuse(long).contains("notes"));
    }
}
