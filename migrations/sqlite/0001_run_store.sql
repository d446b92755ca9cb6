-- The frictionbench run store (docs/src/data-model.md). Times are UTC text in RFC 3339 with
-- milliseconds ('2026-11-22T05:30:00.123Z', from SQLite's strftime), so they sort and compare
-- as text. JSON columns hold text checked with json_valid().

-- One experiment run: what was asked, on which bench, how it went.
CREATE TABLE runs (
    id                   INTEGER PRIMARY KEY,
    kind                 TEXT    NOT NULL,
    name                 TEXT    NOT NULL,
    spec                 TEXT    NOT NULL CHECK (json_valid(spec)),
    status               TEXT    NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'completed', 'aborted', 'failed', 'interrupted')),
    -- Why the run ended the way it did (abort reason, fault), NULL while running or completed.
    status_reason        TEXT,
    created_at           TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at           TEXT,
    finished_at          TEXT,
    -- Snapshot of the bench configuration (limits, period, gains, lockstep models) and of the
    -- device profiles used, as they were when the run started.
    bench_config         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(bench_config)),
    device_profiles      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(device_profiles)),
    software_version     TEXT    NOT NULL,
    operator_note        TEXT,
    -- Lockstep model ids in output order (JSON array of strings).
    models               TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(models)),
    -- Control-loop timing statistics, filled in by the recorder.
    period_s             REAL,
    period_error_p50_us  REAL,
    period_error_p99_us  REAL,
    period_error_max_us  REAL,
    overruns             INTEGER NOT NULL DEFAULT 0,
    -- Batches (and the samples in them) the recorder channel refused because it was full.
    dropped_batches      INTEGER NOT NULL DEFAULT 0,
    dropped_samples      INTEGER NOT NULL DEFAULT 0,
    -- Committed sample count, kept up to date at every commit.
    sample_count         INTEGER NOT NULL DEFAULT 0,
    -- JSON array of {"at": time, "t": run time [s] or null, "reason": text}.
    interruption_log     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(interruption_log))
);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_kind_created ON runs (kind, created_at);
CREATE INDEX runs_status_created ON runs (status, created_at);

-- Measured samples, stored as chunks of consecutive samples: one row holds samples
-- idx0 .. idx0 + n - 1 of a run (`idx` = the control loop's sample counter; a dropped batch leaves
-- a gap between chunks). Row-per-sample storage reached about 0.4 M samples/s here; chunks reach
-- the >= 1 M samples/s goal. `data` is columnar little-endian: t, x, v, u_cmd, torque_motor,
-- torque_sensor as f64[n] (run time [s], position, velocity, commanded, drive and sensor torque;
-- SI units), then segment and flags as u32[n]. Values come back bit for bit (NaN included).
-- `t0`/`t1` are the first and last run time [s] of the chunk (t increases with idx).
CREATE TABLE samples (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx0    INTEGER NOT NULL,
    n       INTEGER NOT NULL CHECK (n > 0),
    t0      REAL,
    t1      REAL,
    data    BLOB    NOT NULL CHECK (length(data) = n * 56),
    PRIMARY KEY (run_id, idx0)
);
CREATE INDEX samples_t1 ON samples (run_id, t1);

-- Lockstep model outputs, one row per model per sample chunk: `force` is f64[n] little-endian,
-- aligned to the samples idx0 .. idx0 + n - 1 of the same run.
CREATE TABLE model_outputs (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx0    INTEGER NOT NULL,
    model   TEXT    NOT NULL,
    n       INTEGER NOT NULL CHECK (n > 0),
    force   BLOB    NOT NULL CHECK (length(force) = n * 8),
    PRIMARY KEY (run_id, idx0, model)
);

-- Analysis output of a run (Stribeck points, breakaway table, fits, ...).
CREATE TABLE results (
    run_id     INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    analysis   TEXT    NOT NULL CHECK (json_valid(analysis)),
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Fitted or user-given model parameters, with their provenance (runs, method, residuals).
CREATE TABLE parameter_sets (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    model_id   TEXT    NOT NULL,
    params     TEXT    NOT NULL CHECK (json_valid(params)),
    provenance TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(provenance)),
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX parameter_sets_model ON parameter_sets (model_id, created_at);
CREATE INDEX parameter_sets_name ON parameter_sets (name);

-- Queued and timed runs (the scheduler's persisted queue; survives restarts).
CREATE TABLE schedules (
    id         INTEGER PRIMARY KEY,
    spec       TEXT    NOT NULL CHECK (json_valid(spec)),
    -- Earliest start (RFC 3339 UTC); NULL = as soon as the bench is free.
    run_at     TEXT,
    -- Recurrence rule (e.g. an interval in seconds or a cron line); NULL = once.
    recurrence TEXT,
    priority   INTEGER NOT NULL DEFAULT 0,
    state      TEXT    NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'running', 'done', 'cancelled', 'failed')),
    -- The run started last for this entry.
    last_run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX schedules_due ON schedules (state, run_at, priority);
