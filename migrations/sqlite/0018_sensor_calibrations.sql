-- The calibration records of a bench's torque sensors (docs/src/calibration.md) and each run's
-- zero and the calibration it ran with. A sensor is named as bench.toml names it:
-- `daq.measured_torque` (the DAQ's analog input) or `sensor` (the Modbus torque sensor).
-- Sensitivity and offset are in the sensor's own terms: N m (N) per V and V for the DAQ's
-- input, the profile's scale and N m (N) for a Modbus sensor. Dates are calendar days
-- (YYYY-MM-DD). (migrations/postgres/0018_sensor_calibrations.sql: the same.)
CREATE TABLE sensor_calibrations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
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

-- The zero each run measured before it moved (drive disabled, shaft at rest), in the sensor's
-- raw terms (V for the DAQ, N m or N for a Modbus sensor's tare reading), and the calibration
-- it ran with (NULL: none on record).
CREATE TABLE run_sensor_zeros (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    sensor         TEXT    NOT NULL,
    zero           REAL    NOT NULL,
    calibration_id INTEGER REFERENCES sensor_calibrations (id),
    at             TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, sensor)
);
