-- A lab of many benches (`bench runs push`): runs, parameter sets and comparisons carry a UUID
-- assigned when they are created, so the same record pushed twice (or again after a push was
-- killed midway) is recognised in the lab's store, whose own ids differ. Records made before
-- this migration get a random (version 4) UUID here.
ALTER TABLE runs ADD COLUMN uuid TEXT;
ALTER TABLE parameter_sets ADD COLUMN uuid TEXT;
ALTER TABLE comparisons ADD COLUMN uuid TEXT;

UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4'
    || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1)
    || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))) WHERE uuid IS NULL;
UPDATE parameter_sets SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4'
    || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1)
    || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))) WHERE uuid IS NULL;
UPDATE comparisons SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4'
    || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1)
    || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))) WHERE uuid IS NULL;

CREATE UNIQUE INDEX runs_uuid ON runs (uuid);
CREATE UNIQUE INDEX parameter_sets_uuid ON parameter_sets (uuid);
CREATE UNIQUE INDEX comparisons_uuid ON comparisons (uuid);
