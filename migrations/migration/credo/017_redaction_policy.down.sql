DROP TABLE scope_policy;
ALTER TABLE episode DROP COLUMN redactions;
