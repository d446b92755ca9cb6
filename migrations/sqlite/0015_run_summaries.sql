-- Summaries that answer a lab's questions (docs/src/trends.md): per run, the numbers its
-- analysis and its fits produced, one row each, keyed by bench, run, time, model and
-- parameter, so a trend over months reads a few thousand small rows instead of every run's
-- JSON. Derived from `results.analysis` and `parameter_sets` by the run store when they are
-- stored (and in the target of `bench runs push`); `summarised` marks what has been derived.
-- SQL cannot read every kind's analysis in its typed form, so the rows of a store made before
-- this migration are filled in by the run store the first time it opens it (the rows whose
-- `summarised` is 0). (migrations/postgres/0015_run_summaries.sql does the same on PostgreSQL.)
CREATE TABLE run_summaries (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    -- The parameter set a fit row comes from; 0 for a measured row.
    set_id    INTEGER NOT NULL DEFAULT 0,
    bench_id  TEXT    NOT NULL,
    -- The run's start (its creation if it never started), RFC 3339 UTC as in `runs`.
    at        TEXT    NOT NULL,
    source    TEXT    NOT NULL
        CHECK (source IN ('steady_state', 'breakaway', 'stiffness', 'fit')),
    -- The model id of a fit; '' for a measured row.
    model     TEXT    NOT NULL DEFAULT '',
    param     TEXT    NOT NULL,
    -- Position among the run's rows of the same parameter (steady-state points, ramp rates).
    idx       INTEGER NOT NULL DEFAULT 0,
    -- The point's abscissa: velocity [rad/s] of a steady-state point, rate [N m/s] of a ramp.
    x         REAL,
    value     REAL    NOT NULL,
    std_error REAL,
    PRIMARY KEY (run_id, set_id, model, param, idx)
);
-- A trend of one bench, and of one model's fits on every bench (covering: a baseline's mean
-- reads no table row); drift from a tag's runs (covering, one seek per tagged run).
CREATE INDEX run_summaries_bench_trend ON run_summaries (param, bench_id, at);
CREATE INDEX run_summaries_trend ON run_summaries (param, model, at, bench_id, value);
CREATE INDEX run_summaries_drift ON run_summaries (param, model, run_id, value, bench_id, at);
CREATE INDEX run_summaries_set ON run_summaries (set_id);

ALTER TABLE results ADD COLUMN summarised INTEGER NOT NULL DEFAULT 0;
ALTER TABLE parameter_sets ADD COLUMN summarised INTEGER NOT NULL DEFAULT 0;
CREATE INDEX results_unsummarised ON results (run_id) WHERE summarised = 0;
CREATE INDEX parameter_sets_unsummarised ON parameter_sets (id) WHERE summarised = 0;
