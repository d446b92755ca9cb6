-- Several benches may record into one store (a lab's PostgreSQL; the same schema here). Each
-- `bench serve` keeps its own queue settings (pause, e-stop latch, failure policy) and its own
-- schedule: both are scoped by the bench's `bench_id`. Settings and entries made before this
-- migration belong to no bench in particular ('') and still apply to a bench that has not set
-- its own, so a latched e-stop survives the upgrade. Queued runs carry their bench already.
CREATE TABLE bench_settings (
    bench_id TEXT NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (bench_id, key)
);
INSERT INTO bench_settings (bench_id, key, value) SELECT '', key, value FROM queue_settings;
DROP TABLE queue_settings;

ALTER TABLE schedules ADD COLUMN bench_id TEXT NOT NULL DEFAULT '';
CREATE INDEX schedules_by_bench ON schedules (bench_id, state);
