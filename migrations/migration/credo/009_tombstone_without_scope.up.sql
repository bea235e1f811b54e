-- A tombstone keeps no trace of the scope it erased: a scope name like user:1234 is
-- guessable, so even a hash of it gave the name back. What was erased, how much and when
-- is all a tombstone says; the purge's caller gets its id to keep the link elsewhere.
ALTER TABLE purge_tombstone DROP COLUMN scope_hash;
