-- `bench serve`: the persisted run queue and schedule (survive a daemon restart).

-- Runs waiting in the queue (each also has a `runs` row with status 'queued'), in queue order.
CREATE TABLE queue_items (
    run_id   INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    priority INTEGER NOT NULL DEFAULT 0,
    -- 0-based place in the queue (lower runs first).
    position INTEGER NOT NULL
);

-- Queue settings by name: 'paused' ('true'/'false'), 'on_failure' ('continue'/'stop'),
-- 'estop' ('true'/'false': the latched e-stop).
CREATE TABLE queue_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Schedule entries: `spec` holds the entry body, `{"spec": {...}}`, `{"batch": [...]}` or
-- `{"sweep": {"spec": {...}, "param": "params.x", "values": [...]}}`; `recurrence` is NULL,
-- 'nightly' or 'weekly'; `next_run_at` is when the entry next enqueues its runs (RFC 3339 UTC,
-- NULL once a one-off entry has fired).
ALTER TABLE schedules ADD COLUMN next_run_at TEXT;
