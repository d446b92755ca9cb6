-- Model comparison tables (`bench compare` on stored runs, issue 5): which runs estimated and
-- validated which models, with what options, and the resulting MSE table.

CREATE TABLE comparisons (
    id            INTEGER PRIMARY KEY,
    created_at    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    -- Run ids (JSON arrays of integers) the models were fitted on and scored on.
    estimate_runs TEXT    NOT NULL CHECK (json_valid(estimate_runs)),
    validate_runs TEXT    NOT NULL CHECK (json_valid(validate_runs)),
    -- The model choices as given (JSON array of strings, e.g. "lugre=fc+fs").
    models        TEXT    NOT NULL CHECK (json_valid(models)),
    -- Replay, regime thresholds, iteration cap, CSV files used besides runs (JSON object).
    options       TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(options)),
    -- The comparison table (JSON object: rows ranked by validation MSE).
    result        TEXT    NOT NULL CHECK (json_valid(result))
);
CREATE INDEX comparisons_created ON comparisons (created_at);

-- Which runs each comparison used, so a run lists its comparisons.
CREATE TABLE comparison_runs (
    comparison_id INTEGER NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    role          TEXT    NOT NULL CHECK (role IN ('estimate', 'validate')),
    PRIMARY KEY (comparison_id, run_id, role)
);
CREATE INDEX comparison_runs_run ON comparison_runs (run_id);
