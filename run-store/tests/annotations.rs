//! Tags and notes edited after a run, searched by tag, and the append-only audit log (issue 28).

use crate::util::{Engine, new_run, temp_store};
use run_store::{Annotation, AuditEntry, AuditFilter, RunFilter};

fn entry(user: &str, allowed: bool) -> AuditEntry {
    AuditEntry {
        bench_id: "b1".into(),
        user: Some(user.into()),
        role: Some("operator".into()),
        remote: Some("10.0.0.7:5000".into()),
        method: "PATCH".into(),
        path: "/api/runs/1".into(),
        status: if allowed { 200 } else { 403 },
        allowed,
        ..AuditEntry::default()
    }
}

async fn tags_and_notes_are_edited_audited_and_searched(engine: Engine) {
    let (place, store) = temp_store(engine).await;
    let a = store.create_run(&new_run("prbs", &[])).await.unwrap();
    let b = store.create_run(&new_run("prbs", &[])).await.unwrap();
    let edit = Annotation {
        add: vec!["good".into(), "regreased".into()],
        notes: Some("bearing re-greased before this run".into()),
        ..Annotation::default()
    };
    let (before, after) = store.annotate(a, &edit, entry("ann", true)).await.unwrap();
    assert_eq!(before.tags, Vec::<String>::new());
    assert_eq!(before.notes.as_deref(), Some("note"));
    assert_eq!(after.tags, ["good", "regreased"]);
    let run = store.run(a).await.unwrap();
    assert_eq!(run.tags, ["good", "regreased"]);
    assert_eq!(
        run.notes.as_deref(),
        Some("bearing re-greased before this run")
    );
    // A refused edit (a bad tag) changes nothing and logs nothing.
    let bad = Annotation {
        add: vec!["two words".into()],
        remove: vec!["good".into()],
        ..Annotation::default()
    };
    let e = store
        .annotate(a, &bad, entry("ann", true))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("tags"), "{e}");
    assert_eq!(store.run(a).await.unwrap().tags, ["good", "regreased"]);
    store
        .annotate(
            b,
            &Annotation {
                add: vec!["suspect".into()],
                ..Default::default()
            },
            entry("bob", true),
        )
        .await
        .unwrap();
    let tagged = |tag: &str| {
        let filter = RunFilter {
            tag: Some(tag.into()),
            ..RunFilter::default()
        };
        let store = &store;
        async move { store.list_runs(&filter).await.unwrap() }
    };
    let good = tagged("good").await;
    assert_eq!((good.total, good.runs[0].id), (1, a));
    assert_eq!(tagged("suspect").await.runs[0].id, b);
    assert_eq!(tagged("absent").await.total, 0);
    // The audit log: both edits with their old values, newest first; a refused request too.
    store.append_audit(&entry("eve", false)).await.unwrap();
    let log = store.audit_log(&AuditFilter::default()).await.unwrap();
    assert_eq!(log.len(), 3);
    assert_eq!(
        (log[0].user.as_deref(), log[0].allowed, log[0].status),
        (Some("eve"), false, 403)
    );
    assert_eq!(log[2].run_id, Some(a));
    let detail: serde_json::Value =
        serde_json::from_str(log[2].detail.as_deref().unwrap()).unwrap();
    assert_eq!(detail["before"]["notes"], "note");
    assert_eq!(
        detail["after"]["tags"],
        serde_json::json!(["good", "regreased"])
    );
    let anns = store
        .audit_log(&AuditFilter {
            user: Some("ann".into()),
            ..AuditFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(anns.len(), 1);
    // `since` is a date or a time, compared as the stored times are written.
    let since = |s: &str| AuditFilter {
        since: Some(s.into()),
        ..AuditFilter::default()
    };
    let all = store.audit_log(&AuditFilter::default()).await.unwrap();
    assert_eq!(store.audit_log(&since("2000-01-01")).await.unwrap(), all);
    assert!(
        store
            .audit_log(&since("9999-01-01"))
            .await
            .unwrap()
            .is_empty()
    );
    let bad = store.audit_log(&since("null")).await.unwrap_err();
    assert!(bad.to_string().contains("since"), "{bad}");
    // Nothing edits or deletes an entry: the database itself refuses.
    for sql in [
        "UPDATE audit_log SET allowed = TRUE",
        "DELETE FROM audit_log",
    ] {
        let e = raw_exec(&place.location, sql).await.unwrap_err();
        assert!(e.contains("append-only"), "{sql}: {e}");
    }
    assert_eq!(
        store
            .audit_log(&AuditFilter::default())
            .await
            .unwrap()
            .len(),
        3
    );
}

/// Runs `sql` on its own connection, outside the store.
async fn raw_exec(location: &run_store::Location, sql: &str) -> Result<(), String> {
    use sqlx::Connection;
    let sql = sqlx::AssertSqlSafe(sql.to_string());
    let done = match location {
        run_store::Location::Sqlite(path) => {
            let url = format!("sqlite://{}", path.display());
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            sqlx::query(sql).execute(&mut c).await.map(drop)
        }
        run_store::Location::Postgres(url) => {
            let mut c = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query(sql).execute(&mut c).await.map(drop)
        }
    };
    done.map_err(|e| e.to_string())
}

/// `q` searches every run (not one page): name, kind, tags, notes and `#id`, case-insensitively, each
/// word must match, `%` and `_` are literal; `total` counts all matches.
async fn free_text_search_runs_over_all_runs_with_the_right_total(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let mut ramps = Vec::new();
    for _ in 0..7 {
        ramps.push(
            store
                .create_run(&new_run("torque_ramp", &[]))
                .await
                .unwrap(),
        );
    }
    let sweep = store
        .create_run(&new_run("velocity_sweep", &[]))
        .await
        .unwrap();
    let edit = Annotation {
        add: vec!["Regreased".into()],
        notes: Some("bearing 100% dry".into()),
        ..Annotation::default()
    };
    store
        .annotate(ramps[0], &edit, entry("ann", true))
        .await
        .unwrap();
    let search = |q: &str, limit: u32| {
        let filter = RunFilter {
            q: Some(q.into()),
            limit,
            ..RunFilter::default()
        };
        let store = &store;
        async move { store.list_runs(&filter).await.unwrap() }
    };
    let ids = |page: &run_store::RunPage| page.runs.iter().map(|r| r.id).collect::<Vec<_>>();
    // Kind, over all pages: one row shown, seven counted.
    let page = search("RAMP", 1).await;
    assert_eq!((page.total, ids(&page)), (7, vec![ramps[6]]));
    assert_eq!(ids(&search("sweep", 50).await), [sweep]);
    // A tag, notes, and two words that must both match.
    assert_eq!(ids(&search("regrease", 50).await), [ramps[0]]);
    assert_eq!(ids(&search("dry", 50).await), [ramps[0]]);
    assert_eq!(ids(&search("ramp  dry", 50).await), [ramps[0]]);
    assert_eq!(search("sweep dry", 50).await.total, 0);
    // `%` and `_` are the characters themselves, not wildcards.
    assert_eq!(ids(&search("100%", 50).await), [ramps[0]]);
    assert_eq!(search("1_0", 50).await.total, 0);
    assert_eq!(search("ramp%test", 50).await.total, 0);
    // `#N` (or `N`) is also run N.
    assert_eq!(ids(&search(&format!("#{sweep}"), 50).await), [sweep]);
    // Blank is no filter.
    assert_eq!(search("  ", 50).await.total, 8);
}

crate::on_both_engines!(
    tags_and_notes_are_edited_audited_and_searched,
    free_text_search_runs_over_all_runs_with_the_right_total,
);
