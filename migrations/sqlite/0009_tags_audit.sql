-- A lab accounts for its nights (docs/src/lab.md#who-did-what): tags on a run, edited after it
-- (`bench runs tag`, PATCH /api/runs/{id}) and searched by (`bench runs list --tag`); notes live
-- in runs.operator_note. The audit log: every mutating request, allowed or refused, and every
-- edit of a run's tags or notes, with the old value. Nothing in the product updates or deletes
-- an entry; the triggers refuse it on the database itself.
CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag    TEXT    NOT NULL,
    PRIMARY KEY (run_id, tag)
);
CREATE INDEX run_tags_by_tag ON run_tags (tag, run_id);

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT    NOT NULL,
    bench_id    TEXT    NOT NULL DEFAULT '',
    user_name   TEXT,
    role        TEXT,
    remote      TEXT,
    method      TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    run_id      INTEGER,
    schedule_id INTEGER,
    status      INTEGER NOT NULL,
    allowed     INTEGER NOT NULL CHECK (allowed IN (0, 1)),
    detail      TEXT    CHECK (detail IS NULL OR json_valid(detail))
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_user ON audit_log (user_name, at);

CREATE TRIGGER audit_log_append_only_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_append_only_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
