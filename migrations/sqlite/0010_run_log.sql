-- A run's log of what was checked and read back (the drive's watchdog read back, the connect
-- settings, a profile's unverified signals, the real-time scheduling it got) beside its
-- interruption log, which keeps only what interrupted or threatened the run. Runs stored before
-- carry those lines in their interruption log: they move to the run log, in order.
-- (migrations/postgres/0010_run_log.sql does the same on PostgreSQL.)
ALTER TABLE runs ADD COLUMN run_log TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(run_log));
UPDATE runs SET
    run_log = (SELECT json_group_array(json(e.value)) FROM json_each(runs.interruption_log) AS e
               WHERE (json_extract(e.value, '$.reason') LIKE 'drive connect settings written and read back'
        OR json_extract(e.value, '$.reason') LIKE 'drive communication watchdog % s (read back)'
        OR json_extract(e.value, '$.reason') LIKE 'ran WITHOUT a drive communication watchdog%'
        OR json_extract(e.value, '$.reason') LIKE 'ran with unverified drive profile signals%'
        OR json_extract(e.value, '$.reason') LIKE 'the drive profile has no velocity feedback%'
        OR json_extract(e.value, '$.reason') LIKE 'normal priority: SCHED_FIFO%'
        OR json_extract(e.value, '$.reason') LIKE 'CPU idle states left as they are%')),
    interruption_log = (SELECT json_group_array(json(e.value))
                        FROM json_each(runs.interruption_log) AS e WHERE NOT (json_extract(e.value, '$.reason') LIKE 'drive connect settings written and read back'
        OR json_extract(e.value, '$.reason') LIKE 'drive communication watchdog % s (read back)'
        OR json_extract(e.value, '$.reason') LIKE 'ran WITHOUT a drive communication watchdog%'
        OR json_extract(e.value, '$.reason') LIKE 'ran with unverified drive profile signals%'
        OR json_extract(e.value, '$.reason') LIKE 'the drive profile has no velocity feedback%'
        OR json_extract(e.value, '$.reason') LIKE 'normal priority: SCHED_FIFO%'
        OR json_extract(e.value, '$.reason') LIKE 'CPU idle states left as they are%'))
WHERE EXISTS (SELECT 1 FROM json_each(runs.interruption_log) AS e WHERE (json_extract(e.value, '$.reason') LIKE 'drive connect settings written and read back'
        OR json_extract(e.value, '$.reason') LIKE 'drive communication watchdog % s (read back)'
        OR json_extract(e.value, '$.reason') LIKE 'ran WITHOUT a drive communication watchdog%'
        OR json_extract(e.value, '$.reason') LIKE 'ran with unverified drive profile signals%'
        OR json_extract(e.value, '$.reason') LIKE 'the drive profile has no velocity feedback%'
        OR json_extract(e.value, '$.reason') LIKE 'normal priority: SCHED_FIFO%'
        OR json_extract(e.value, '$.reason') LIKE 'CPU idle states left as they are%'));
