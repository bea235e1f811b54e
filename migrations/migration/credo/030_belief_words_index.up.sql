-- The beliefs that hold a word, for the full-text ranking: one index for every scope,
-- read with the scope's condition beside it (memory/words.go). A statement of its own:
-- Citus refuses a CREATE INDEX beside another statement on a distributed table.
CREATE INDEX belief_words_idx ON belief USING gin (words);
