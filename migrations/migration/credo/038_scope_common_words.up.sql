-- The words each scope's beliefs share most (memory/words_common.go): those more than
-- memory.MaxTermBeliefs of its beliefs hold, as migration 029 stores them (behind the
-- scope's prefix). The words ranking of recall leaves them out before it reads the
-- words index: GIN has no early stop, so counting such a word reads its whole posting
-- list, where what it tells apart is little. Counted by the consolidation pass when the
-- scope's beliefs grew or shrank by a fifth since, under the scope's lock; every purge,
-- curation or redaction of the scope drops its row, counted again at the next pass.
CREATE TABLE scope_common_words (
    scope text PRIMARY KEY,
    words text[] NOT NULL,
    -- The scope's beliefs, any status, when counted.
    beliefs bigint NOT NULL,
    counted_at timestamptz NOT NULL
);
