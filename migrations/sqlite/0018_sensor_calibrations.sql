-- The calibration records of a bench's torque sensors (docs/src/calibration.md) and each run's
-- zero and the calibration it ran with. A sensor is named as bench.toml names it:
-- `daq.measured_torque` (the DAQ's analog input) or `sensor` (the Modbus torque sensor).
-- Sensitivity and offset are in the sensor's own terms: N m (N) per V and V for the DAQ's
-- input, the profile's scale and N m (N) for a Modbus sensor. Dates are calendar days
-- (YYYY-MM-DD). (migrations/postgres/0018_sensor_calibrations.sql: the same.)
CREATE TABLE sensor_calibrations (
    id           INTEGER PRIMARY KEY,
    bench_id     TEXT    NOT NULL,
    sensor       TEXT    NOT NULL,
    sensitivity  REAL    NOT NULL,
    zero_offset  REAL    NOT NULL,
    certificate  TEXT    NOT NULL,
    calibrated   TEXT    NOT NULL,
    due          TEXT    NOT NULL CHECK (due > calibrated),
    recorded_by  TEXT    NOT NULL,
    recorded_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX sensor_calibrations_by_sensor ON sensor_calibrations (bench_id, sensor, id);

-- What each run read its torque with: the calibration on record when it started (NULL: none),
-- whether that calibration was past due (run only with `[safety] allow_overdue_calibration`),
-- a note for the operator ('no calibration on record'), and the zero measured before it moved
-- (drive disabled, shaft at rest) in the sensor's raw terms: V for the DAQ's input (NULL until
-- measured, or when `zero_scans = 0`).
CREATE TABLE run_sensors (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    sensor         TEXT    NOT NULL,
    calibration_id INTEGER REFERENCES sensor_calibrations (id),
    overdue        INTEGER NOT NULL DEFAULT 0 CHECK (overdue IN (0, 1)),
    note           TEXT,
    zero           REAL,
    at             TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, sensor)
);
