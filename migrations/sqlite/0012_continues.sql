-- A continuation of an interrupted, failed or aborted run (`bench runs resume`): a new run that
-- measures only the segments its predecessor did not finish. `continues` names that
-- predecessor; a chain is read as one run by the analyses and fits.
-- (migrations/postgres/0012_continues.sql does the same on PostgreSQL.)
ALTER TABLE runs ADD COLUMN continues INTEGER REFERENCES runs (id) ON DELETE SET NULL;
CREATE UNIQUE INDEX runs_continues ON runs (continues);
