-- A tombstone no longer keeps counts: a partial purge's scope.purged change, which names
-- the scope, carries the same counts. Its id is random (memory gives it, overriding the
-- identity): sequential ids ordered tombstones as the feed orders purges. What was
-- erased and on which day is what a tombstone says; the purge's caller gets the counts
-- and the id.
ALTER TABLE purge_tombstone DROP COLUMN counts;
