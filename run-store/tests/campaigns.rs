//! Campaigns across a restart (migration 0014): a store from before it keeps its campaigns and
//! their run links; the startup sweep marks `interrupted` only the campaigns left `running` on
//! the daemon's own bench, once; a schedule entry records why it could not start.

use crate::util::{Engine, older_store};
use run_store::{CampaignStatus, Fired, Store};
use serde_json::json;

/// A completed run, and campaigns as an older daemon left them: running on bench `a` (linked
/// to the run), running on bench `b`, completed on bench `a`.
fn old_campaigns() -> Vec<String> {
    let campaign = |k: u32, status: &str, bench: &str| {
        format!(
            "INSERT INTO campaigns (uuid, created_at, updated_at, status, request, bench,
                 software_version)
             VALUES ('00000000-0000-4000-8000-{k:012}', '2026-11-01T10:00:00Z',
                 '2026-11-01T10:00:00Z', '{status}', '{{\"models\": [\"lugre\"]}}',
                 '{{\"bench_id\": \"{bench}\"}}', 'old')"
        )
    };
    vec![
        "INSERT INTO runs (uuid, kind, name, spec, status, software_version)
         VALUES ('00000000-0000-4000-9000-000000000001', 'torque_ramp', 'b', '{}', 'completed',
             'old')"
            .to_string(),
        campaign(1, "running", "a"),
        campaign(2, "running", "b"),
        campaign(3, "completed", "a"),
        "INSERT INTO campaign_runs (campaign_id, run_id, step) VALUES (1, 1, 'breakaway')".into(),
    ]
}

async fn the_startup_sweep_marks_this_benchs_running_campaigns_interrupted(engine: Engine) {
    let (place, _older) = older_store(engine, "0014", &old_campaigns()).await;
    let store = Store::open(&place.location).await.unwrap();
    assert_eq!(
        store.campaign_of_run(1).await.unwrap(),
        Some((1, "breakaway".to_string())),
        "the run links survive the migration"
    );
    let reason = |id: i64| format!("resume with bench characterise --resume {id}");
    let marked = store
        .interrupt_running_campaigns("a", reason)
        .await
        .unwrap();
    assert_eq!(marked, [1]);
    let c = store.campaign(1).await.unwrap();
    assert_eq!(c.status, CampaignStatus::Interrupted);
    assert_eq!(
        c.reason.as_deref(),
        Some("resume with bench characterise --resume 1")
    );
    assert_eq!(c.request, json!({"models": ["lugre"]}), "the rest is kept");
    let other = store.campaign(2).await.unwrap();
    assert_eq!(other.status, CampaignStatus::Running, "another bench's");
    assert_eq!(
        store.campaign(3).await.unwrap().status,
        CampaignStatus::Completed
    );
    assert!(
        store
            .interrupt_running_campaigns("a", reason)
            .await
            .unwrap()
            .is_empty()
    );
    store.close().await;

    let store = Store::open(&place.location).await.unwrap();
    let e = store
        .add_schedule(
            &json!({"campaign": {}}),
            "2026-11-02T02:00:00Z",
            Some("nightly"),
            0,
        )
        .await
        .unwrap();
    assert_eq!((e.last_error.as_deref(), e.last_campaign_id), (None, None));
    let refused = Fired {
        error: Some("the queue is paused".into()),
        ..Fired::default()
    };
    let next = Some("2026-11-03T02:00:00Z");
    store
        .update_schedule(e.id, "pending", next, &refused)
        .await
        .unwrap();
    let e2 = store.schedule(e.id).await.unwrap();
    assert_eq!(e2.last_error.as_deref(), Some("the queue is paused"));
    assert_eq!(e2.next_run_at.as_deref(), next);
    let started = Fired {
        campaign_id: Some(3),
        ..Fired::default()
    };
    store
        .update_schedule(e.id, "pending", next, &started)
        .await
        .unwrap();
    let e3 = store.schedule(e.id).await.unwrap();
    assert_eq!((e3.last_error, e3.last_campaign_id), (None, Some(3)));
    store.close().await;
}

crate::on_both_engines!(the_startup_sweep_marks_this_benchs_running_campaigns_interrupted);
