-- As migrations/sqlite/0015_run_summaries.sql: one row per number a run's analysis or fit
-- produced, back-filled by the run store when it first opens an older store.
CREATE TABLE run_summaries (
    run_id    BIGINT  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    set_id    BIGINT  NOT NULL DEFAULT 0,
    bench_id  TEXT    NOT NULL,
    at        TEXT    NOT NULL,
    source    TEXT    NOT NULL
        CHECK (source IN ('steady_state', 'breakaway', 'stiffness', 'fit')),
    model     TEXT    NOT NULL DEFAULT '',
    param     TEXT    NOT NULL,
    idx       INTEGER NOT NULL DEFAULT 0,
    x         DOUBLE PRECISION,
    value     DOUBLE PRECISION NOT NULL,
    std_error DOUBLE PRECISION,
    PRIMARY KEY (run_id, set_id, model, param, idx)
);
CREATE INDEX run_summaries_bench_trend ON run_summaries (param, bench_id, at);
CREATE INDEX run_summaries_trend ON run_summaries (param, model, at, bench_id, value);
CREATE INDEX run_summaries_drift ON run_summaries (param, model, run_id, value, bench_id, at);
CREATE INDEX run_summaries_set ON run_summaries (set_id);

ALTER TABLE results ADD COLUMN summarised INTEGER NOT NULL DEFAULT 0;
ALTER TABLE parameter_sets ADD COLUMN summarised INTEGER NOT NULL DEFAULT 0;
CREATE INDEX results_unsummarised ON results (run_id) WHERE summarised = 0;
CREATE INDEX parameter_sets_unsummarised ON parameter_sets (id) WHERE summarised = 0;
