-- Two more figures of a run's loop timing: the 99.9th percentile period error, and the median
-- time from waking to the end of a tick's work (the period less it is the margin a late
-- wake-up has; `bench perf serve --floor` counts the machine's late wake-ups against it).
-- Runs stored before have neither. (migrations/postgres/0013_tick_timing.sql: the same.)
ALTER TABLE runs ADD COLUMN period_error_p999_us REAL;
ALTER TABLE runs ADD COLUMN tick_work_p50_us REAL;
