-- A campaign the daemon was running when it stopped is marked `interrupted` at the next
-- `bench serve` (it does not stay `running`); a schedule entry keeps why it last could not
-- start (`last_error`) and the campaign it last started (`last_campaign_id`).
-- (migrations/postgres/0014_campaign_interrupted.sql does the same on PostgreSQL.)
-- SQLite cannot change a CHECK in place: `campaigns` is rebuilt. `campaign_runs` refers to it
-- (ON DELETE CASCADE), so its rows are kept aside and the table rebuilt after.
CREATE TABLE campaign_runs_kept AS SELECT campaign_id, run_id, step FROM campaign_runs;
DROP TABLE campaign_runs;

CREATE TABLE campaigns_new (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT    NOT NULL UNIQUE,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    status        TEXT    NOT NULL
                  CHECK (status IN ('running', 'completed', 'stopped', 'failed', 'interrupted')),
    request       TEXT    NOT NULL CHECK (json_valid(request)),
    bench         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(bench)),
    software_version TEXT NOT NULL,
    steps         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(steps)),
    fits          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(fits)),
    comparison_id INTEGER REFERENCES comparisons (id) ON DELETE SET NULL,
    trial_run_id  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    answer        TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(answer)),
    reason        TEXT
);
INSERT INTO campaigns_new SELECT id, uuid, created_at, updated_at, status, request, bench,
    software_version, steps, fits, comparison_id, trial_run_id, answer, reason FROM campaigns;
DROP TABLE campaigns;
ALTER TABLE campaigns_new RENAME TO campaigns;
CREATE INDEX campaigns_created ON campaigns (created_at);

CREATE TABLE campaign_runs (
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step        TEXT    NOT NULL,
    PRIMARY KEY (campaign_id, run_id)
);
INSERT INTO campaign_runs SELECT campaign_id, run_id, step FROM campaign_runs_kept;
DROP TABLE campaign_runs_kept;
CREATE INDEX campaign_runs_run ON campaign_runs (run_id);

ALTER TABLE schedules ADD COLUMN last_error TEXT;
ALTER TABLE schedules ADD COLUMN last_campaign_id INTEGER
    REFERENCES campaigns (id) ON DELETE SET NULL;
