-- Tombstones written since have no scope hash, and none can be computed again.
ALTER TABLE purge_tombstone ADD COLUMN scope_hash text NOT NULL DEFAULT '';
