-- A continuation of an interrupted, failed or aborted run (`bench runs resume`): a new run that
-- measures only the segments its predecessor did not finish. `continues` names that
-- predecessor; a chain is read as one run by the analyses and fits.
-- (migrations/sqlite/0012_continues.sql does the same on SQLite; numbered as it.)
ALTER TABLE runs ADD COLUMN continues BIGINT REFERENCES runs (id) ON DELETE SET NULL;
CREATE UNIQUE INDEX runs_continues ON runs (continues);
