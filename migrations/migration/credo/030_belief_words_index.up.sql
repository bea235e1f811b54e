-- The beliefs that hold a word, for the full-text ranking: one index for every scope,
-- whose entries are per scope and word (029), read with the scope's condition beside it
-- (memory/words.go). Without GIN's pending list (fastupdate off): every read would scan
-- all the words written since the last vacuum, every scope's, where writes never stop; a
-- write updates the index in place instead, a belief's few words at a time. A statement
-- of its own: Citus refuses a CREATE INDEX beside another statement on a distributed
-- table.
CREATE INDEX belief_words_idx ON belief USING gin (words) WITH (fastupdate = off);
