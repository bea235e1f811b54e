-- Tombstones written since have no scope hash, and none can be computed again.
ALTER TABLE purge_tombstone ADD COLUMN scope_hash text NOT NULL DEFAULT '';
-- As migration 001 defined it: no default for rows written from now on.
ALTER TABLE purge_tombstone ALTER COLUMN scope_hash DROP DEFAULT;
