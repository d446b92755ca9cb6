-- A run's log of what was checked and read back (the drive's watchdog read back, the connect
-- settings, a profile's unverified signals, the real-time scheduling it got) beside its
-- interruption log, which keeps only what interrupted or threatened the run. Runs stored before
-- carry those lines in their interruption log: they move to the run log, in order.
-- (migrations/sqlite/0010_run_log.sql does the same on SQLite; numbered as it.)
ALTER TABLE runs ADD COLUMN run_log TEXT NOT NULL DEFAULT '[]' CHECK (run_log::jsonb IS NOT NULL);
UPDATE runs SET
    run_log = COALESCE((SELECT jsonb_agg(e.v ORDER BY e.i)
                        FROM jsonb_array_elements(runs.interruption_log::jsonb)
                             WITH ORDINALITY AS e(v, i)
                        WHERE (e.v->>'reason' LIKE 'drive connect settings written and read back'
        OR e.v->>'reason' LIKE 'drive communication watchdog % s (read back)'
        OR e.v->>'reason' LIKE 'ran WITHOUT a drive communication watchdog%'
        OR e.v->>'reason' LIKE 'ran with unverified drive profile signals%'
        OR e.v->>'reason' LIKE 'the drive profile has no velocity feedback%'
        OR e.v->>'reason' LIKE 'normal priority: SCHED_FIFO%'
        OR e.v->>'reason' LIKE 'CPU idle states left as they are%')), '[]'::jsonb)::text,
    interruption_log = COALESCE((SELECT jsonb_agg(e.v ORDER BY e.i)
                                 FROM jsonb_array_elements(runs.interruption_log::jsonb)
                                      WITH ORDINALITY AS e(v, i)
                                 WHERE NOT (e.v->>'reason' LIKE 'drive connect settings written and read back'
        OR e.v->>'reason' LIKE 'drive communication watchdog % s (read back)'
        OR e.v->>'reason' LIKE 'ran WITHOUT a drive communication watchdog%'
        OR e.v->>'reason' LIKE 'ran with unverified drive profile signals%'
        OR e.v->>'reason' LIKE 'the drive profile has no velocity feedback%'
        OR e.v->>'reason' LIKE 'normal priority: SCHED_FIFO%'
        OR e.v->>'reason' LIKE 'CPU idle states left as they are%')), '[]'::jsonb)::text
WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(runs.interruption_log::jsonb) AS e(v)
              WHERE (e.v->>'reason' LIKE 'drive connect settings written and read back'
        OR e.v->>'reason' LIKE 'drive communication watchdog % s (read back)'
        OR e.v->>'reason' LIKE 'ran WITHOUT a drive communication watchdog%'
        OR e.v->>'reason' LIKE 'ran with unverified drive profile signals%'
        OR e.v->>'reason' LIKE 'the drive profile has no velocity feedback%'
        OR e.v->>'reason' LIKE 'normal priority: SCHED_FIFO%'
        OR e.v->>'reason' LIKE 'CPU idle states left as they are%'));
