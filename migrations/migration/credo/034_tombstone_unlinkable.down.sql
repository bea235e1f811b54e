-- The counts of tombstones written since are gone, and cannot be computed again.
ALTER TABLE purge_tombstone ADD COLUMN counts jsonb NOT NULL DEFAULT '{}';
ALTER TABLE purge_tombstone ALTER COLUMN counts DROP DEFAULT;
