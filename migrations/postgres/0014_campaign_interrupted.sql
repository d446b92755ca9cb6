-- A campaign the daemon was running when it stopped is marked `interrupted` at the next
-- `bench serve` (it does not stay `running`); a schedule entry keeps why it last could not
-- start (`last_error`) and the campaign it last started (`last_campaign_id`).
-- (migrations/sqlite/0014_campaign_interrupted.sql does the same on SQLite.)
ALTER TABLE campaigns DROP CONSTRAINT campaigns_status_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check
    CHECK (status IN ('running', 'completed', 'stopped', 'failed', 'interrupted'));

ALTER TABLE schedules ADD COLUMN last_error TEXT;
ALTER TABLE schedules ADD COLUMN last_campaign_id BIGINT
    REFERENCES campaigns (id) ON DELETE SET NULL;
