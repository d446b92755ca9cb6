//! Chains of continuations (`runs.continues`, migration 0012) on both engines: linked in order,
//! read from any of their runs, never forked.

use crate::util::{Engine, new_run, temp_store};
use run_store::{PushOptions, RunStatus};

async fn a_chain_is_read_from_any_of_its_runs_and_never_forks(engine: Engine) {
    let (_t, store) = temp_store(engine).await;
    let ids: Vec<i64> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            v.push(store.create_run(&new_run("prbs", &[])).await.unwrap());
        }
        v
    };
    let lone = store.create_run(&new_run("prbs", &[])).await.unwrap();
    store.set_continues(ids[1], ids[0]).await.unwrap();
    store.set_continues(ids[2], ids[1]).await.unwrap();
    for id in &ids {
        assert_eq!(store.chain(*id).await.unwrap(), ids);
    }
    assert_eq!(store.chain(lone).await.unwrap(), vec![lone]);
    assert_eq!(store.run(ids[2]).await.unwrap().continues, Some(ids[1]));
    assert_eq!(store.run(ids[0]).await.unwrap().continues, None);
    assert_eq!(store.continued_by(ids[0]).await.unwrap(), Some(ids[1]));
    // A second continuation of the same run is refused, naming the first; nothing changes.
    let err = store.set_continues(lone, ids[0]).await.unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("already continued by run {}", ids[1])),
        "{err}"
    );
    assert_eq!(store.chain(lone).await.unwrap(), vec![lone]);
    assert!(store.continues(999_999).await.is_err());
}

/// `bench runs push` carries the links: the lab's store reads the same chain, in its own ids.
async fn a_pushed_chain_is_the_same_chain_in_the_target(engine: Engine) {
    let (_t, store) = temp_store(engine).await;
    let (_u, lab) = temp_store(engine).await;
    let mut ids = Vec::new();
    for status in [
        RunStatus::Aborted,
        RunStatus::Interrupted,
        RunStatus::Completed,
    ] {
        let id = store.create_run(&new_run("prbs", &[])).await.unwrap();
        store.finish_run(id, status, None).await.unwrap();
        ids.push(id);
    }
    store.set_continues(ids[1], ids[0]).await.unwrap();
    store.set_continues(ids[2], ids[1]).await.unwrap();
    let report = store.push(&lab, &PushOptions::default()).await.unwrap();
    assert_eq!((report.chains.pushed, report.chains.skipped), (2, 0));
    let theirs: Vec<i64> = ids
        .iter()
        .map(|id| {
            let r = report.pushed.iter().find(|r| r.id == *id).unwrap();
            r.target_id.unwrap()
        })
        .collect();
    for id in &theirs {
        assert_eq!(lab.chain(*id).await.unwrap(), theirs);
    }
    // Pushed again: nothing copied, the links already there.
    let again = store.push(&lab, &PushOptions::default()).await.unwrap();
    assert!(again.pushed.is_empty());
    assert_eq!((again.chains.pushed, again.chains.skipped), (0, 2));
}

crate::on_both_engines!(
    a_chain_is_read_from_any_of_its_runs_and_never_forks,
    a_pushed_chain_is_the_same_chain_in_the_target,
);
