-- A redacted transcript stays redacted: the purged text is gone for good.
ALTER TABLE episode DROP COLUMN IF EXISTS redacted_at;
