-- Where an archived run's samples went (`bench archive`, docs/src/archive.md): its raw samples
-- left the `samples` and `model_outputs` tables for one Parquet file, and the run stays listed.
-- Reads of its samples (exports, the run page, fits) go to the file named here. The row is
-- written in the transaction that deletes the chunks, after the file was read back and its row
-- count and checksum matched. (migrations/postgres/0016_run_archives.sql: the same.)
CREATE TABLE run_archives (
    run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    -- The Parquet file, absolute: DIR/bench=ID/date=YYYY-MM-DD/run=N.parquet.
    path        TEXT    NOT NULL,
    rows        INTEGER NOT NULL,
    -- The last sample index in the file (NULL for a run without samples).
    last_idx    INTEGER,
    bytes       INTEGER NOT NULL,
    -- Hex SHA-256 of the rows as written (docs/src/archive.md), checked on the file read back.
    checksum    TEXT    NOT NULL,
    -- The model output columns the file carries (JSON array; empty without --with-models).
    models      TEXT    NOT NULL DEFAULT '[]',
    archived_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
