-- The fleet of a lab (docs/src/lab.md): each bench whose `bench serve` has a `[lab]` section
-- upserts its one row here every `heartbeat_s`, so the lab's GET /api/lab/benches and Fleet page
-- show what every bench is doing. `at` is the store's own clock (never the bench's), so a
-- bench's clock drift cannot make it look alive or stale. A bench is stale once
-- 3 × heartbeat_s have passed since `at`. (migrations/postgres/0017_bench_heartbeats.sql: the
-- same.)
CREATE TABLE bench_heartbeats (
    bench_id         TEXT    PRIMARY KEY,
    state            TEXT    NOT NULL
        CHECK (state IN ('idle', 'running', 'suspended', 'faulted')),
    -- The running run, by its id in the bench's own store (it is pushed once finished).
    run_id           INTEGER,
    run_name         TEXT,
    progress         REAL    CHECK (progress BETWEEN 0 AND 1),
    -- Why the bench is faulted (state 'faulted').
    fault            TEXT,
    -- The stop reason of the bench's last finished run.
    last_stop_reason TEXT,
    heartbeat_s      REAL    NOT NULL CHECK (heartbeat_s > 0),
    at               TEXT    NOT NULL
);

-- When `bench runs push` last brought (or found) a bench's runs here.
CREATE TABLE bench_pushes (
    bench_id  TEXT PRIMARY KEY,
    pushed_at TEXT NOT NULL
);
