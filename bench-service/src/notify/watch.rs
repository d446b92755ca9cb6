//! Which of the scheduler's live events are worth a notification: a run the scheduler ran
//! (or failed to start) ending, the queue pausing, the e-stop latching. A pure state machine
//! over the events' JSON text, so that the order of the live stream is the order of the
//! notifications; imported recordings (a `run` event that was never `running`) are not news.

use serde::Deserialize;
use std::collections::HashSet;

/// Something to tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Run `0` ended (its status and reason are read from the store).
    RunEnded(i64),
    /// The queue paused, not by the e-stop.
    QueuePaused,
    /// The e-stop latched.
    Estop,
}

/// What the watcher remembers between events.
#[derive(Debug, Default)]
pub struct Watch {
    paused: bool,
    estop: bool,
    running: HashSet<i64>,
}

#[derive(Deserialize)]
struct RunEvent {
    run_id: i64,
    status: String,
}

#[derive(Deserialize)]
struct QueueEvent {
    paused: bool,
    estop: bool,
}

impl Watch {
    /// Starting from the queue as the scheduler restored it (a queue that comes back paused is
    /// not news).
    pub fn new(paused: bool, estop: bool) -> Watch {
        Watch {
            paused,
            estop,
            running: HashSet::new(),
        }
    }

    /// The triggers live event `name` with JSON `data` sets off, in order.
    pub fn on_event(&mut self, name: &str, data: &str) -> Vec<Trigger> {
        match name {
            "run" => serde_json::from_str(data)
                .map(|e| self.on_run(e))
                .unwrap_or_default(),
            "queue" => serde_json::from_str(data)
                .map(|e| self.on_queue(e))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn on_run(&mut self, e: RunEvent) -> Vec<Trigger> {
        match e.status.as_str() {
            "running" => {
                self.running.insert(e.run_id);
                Vec::new()
            }
            // The scheduler could not start it: a failure without a `running` before it.
            "failed" => {
                self.running.remove(&e.run_id);
                vec![Trigger::RunEnded(e.run_id)]
            }
            "completed" | "aborted" if self.running.remove(&e.run_id) => {
                vec![Trigger::RunEnded(e.run_id)]
            }
            _ => Vec::new(),
        }
    }

    fn on_queue(&mut self, e: QueueEvent) -> Vec<Trigger> {
        let mut out = Vec::new();
        if e.estop && !self.estop {
            out.push(Trigger::Estop);
        } else if e.paused && !self.paused && !e.estop {
            out.push(Trigger::QueuePaused);
        }
        (self.paused, self.estop) = (e.paused, e.estop);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Trigger, Watch};

    #[test]
    fn run_ends_pauses_and_the_estop_are_told_once_each() {
        let mut w = Watch::new(false, false);
        let run = |id: i64, s: &str| format!(r#"{{"run_id": {id}, "status": "{s}"}}"#);
        let queue = |p: bool, e: bool| {
            format!(r#"{{"paused": {p}, "estop": {e}, "items": [], "waiting": 0}}"#)
        };
        assert_eq!(w.on_event("run", &run(1, "running")), []);
        assert_eq!(
            w.on_event("run", &run(1, "completed")),
            [Trigger::RunEnded(1)]
        );
        // An imported recording is completed without ever running here.
        assert_eq!(w.on_event("run", &run(2, "completed")), []);
        assert_eq!(w.on_event("run", &run(3, "failed")), [Trigger::RunEnded(3)]);
        assert_eq!(
            w.on_event("queue", &queue(true, false)),
            [Trigger::QueuePaused]
        );
        assert_eq!(w.on_event("queue", &queue(true, false)), []);
        assert_eq!(w.on_event("queue", &queue(true, true)), [Trigger::Estop]);
        assert_eq!(w.on_event("queue", &queue(true, true)), []);
        assert_eq!(w.on_event("queue", &queue(false, false)), []);
        // The e-stop pauses the queue too: one notification, the e-stop's.
        assert_eq!(w.on_event("queue", &queue(true, true)), [Trigger::Estop]);
        assert_eq!(w.on_event("fit", "{}"), []);
    }

    #[test]
    fn a_queue_restored_paused_is_not_news() {
        let mut w = Watch::new(true, false);
        let paused = r#"{"paused": true, "estop": false}"#;
        assert_eq!(w.on_event("queue", paused), []);
    }
}
