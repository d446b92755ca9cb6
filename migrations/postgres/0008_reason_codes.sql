-- Each run that did not complete carries a stable code beside its human text: what the
-- scheduler, the metrics, the API (`reason_code`) and the dashboard decide on. Runs stored
-- before codes existed get the code their text names; a text that matches none reads 'other'.
-- (migrations/sqlite/0008_reason_codes.sql does the same on SQLite; numbered as it.)
ALTER TABLE runs ADD COLUMN reason_code TEXT;
UPDATE runs SET reason_code = CASE
    WHEN status_reason LIKE 'limit breach:%' THEN 'limit_breach'
    WHEN status_reason LIKE 'command refused before the write%' THEN 'command_refused'
    WHEN status_reason LIKE 'e-stop:%' THEN 'estop'
    WHEN status_reason LIKE 'stop requested%' THEN 'operator_stop'
    WHEN status_reason LIKE 'abort requested%' THEN 'operator_abort'
    WHEN status_reason LIKE 'removed from the queue%' THEN 'removed_from_queue'
    WHEN status_reason IN ('SIGINT', 'SIGTERM', 'SIGHUP')
      OR status_reason LIKE 'the daemon is shutting down%' THEN 'daemon_signal'
    WHEN status_reason LIKE 'drive fault%'
      OR status_reason LIKE 'the drive has a latched fault%' THEN 'drive_fault'
    WHEN status_reason LIKE 'the drive left operation enabled%' THEN 'drive_disabled'
    WHEN status_reason LIKE 'comms fault:%'
      OR status_reason LIKE 'cannot connect to the %' THEN 'comms_fault'
    WHEN status_reason LIKE 'torque sensor fault%' THEN 'sensor_fault'
    WHEN status_reason LIKE 'torque sensor stall%' THEN 'sensor_stall'
    WHEN status_reason LIKE 'drive stall%' THEN 'drive_stall'
    WHEN status_reason LIKE 'recording failed%'
      OR status_reason LIKE 'recorder:%'
      OR status_reason LIKE 'the recorder was dropped%' THEN 'recording_failed'
    WHEN status_reason LIKE 'panic in the control loop%'
      OR status_reason LIKE 'the control loop stopped unexpectedly%' THEN 'panic'
    WHEN status_reason LIKE 'the daemon stopped while the run was running%'
      OR status_reason LIKE 'the process recording the run ended without closing it%'
      THEN 'interrupted'
    WHEN status_reason LIKE 'could not start:%'
      OR status_reason LIKE 'not restored into the queue:%' THEN 'not_started'
    WHEN status_reason LIKE 'drive:%'
      OR status_reason LIKE 'the drive profile has no %'
      OR status_reason LIKE 'lockstep models:%'
      OR status_reason LIKE 'friction compensator:%' THEN 'setup_failed'
    ELSE 'other'
END
WHERE status_reason IS NOT NULL;
