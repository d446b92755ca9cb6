-- Characterisation campaigns (`bench characterise`): one row per campaign with its request, its
-- steps (each with the run it recorded, the spec it designed and what it measured), its fits,
-- comparison and compensation trial, and the plain-language answer; `campaign_runs` links each
-- step's run back to its campaign (a run page names its campaign).
-- (migrations/postgres/0011_campaigns.sql does the same on PostgreSQL; numbered as it.)
CREATE TABLE campaigns (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT    NOT NULL UNIQUE,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    status        TEXT    NOT NULL
                  CHECK (status IN ('running', 'completed', 'stopped', 'failed')),
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
CREATE INDEX campaigns_created ON campaigns (created_at);

CREATE TABLE campaign_runs (
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step        TEXT    NOT NULL,
    PRIMARY KEY (campaign_id, run_id)
);
CREATE INDEX campaign_runs_run ON campaign_runs (run_id);
