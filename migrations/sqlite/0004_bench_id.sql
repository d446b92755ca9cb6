-- Bench identity (a lab of many benches): the `bench_id` of the bench configuration a run was
-- recorded with (bench.toml `bench_id`, default the host name; `sim` for the simulated bench),
-- read from the run's configuration snapshot, so a run can never disagree with its snapshot.
-- Runs recorded before it have none ('').
ALTER TABLE runs ADD COLUMN bench_id TEXT
    GENERATED ALWAYS AS (coalesce(json_extract(bench_config, '$.bench_id'), '')) VIRTUAL;

CREATE INDEX runs_by_bench ON runs (bench_id, created_at);
