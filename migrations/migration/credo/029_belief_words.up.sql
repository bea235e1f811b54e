-- The words of each belief, for the full-text ranking that recall fuses with the vector
-- one (docs/design.md, "Recall by vectors, words and entities"): subject, attribute,
-- statement and quote, parsed by the 'simple' configuration, which lower-cases and keeps
-- every token as said: codes, numbers, versions and names are not stemmed away. Hyphens
-- are read as spaces first, so that "KX-5521" is the words kx and 5521 wherever it is
-- written (the default parser would read "-5521" as a signed number).
--
-- Each word is stored behind 8 hex digits of its scope's md5, so that the GIN index of
-- the column (030) keeps a posting list per scope and word: a scope's read of a word
-- costs the beliefs of that scope holding it, not every scope's (an index of plain words
-- would answer "user lives" for the whole table). Reads also name the scope, so two
-- scopes sharing a prefix only share index entries. memory/words.go writes the same
-- expression for a question's words. Adding a stored generated column rewrites the table
-- once.
ALTER TABLE belief ADD COLUMN words tsvector GENERATED ALWAYS AS (
    regexp_replace(
        to_tsvector('simple'::regconfig, replace(subject || ' ' || attribute || ' ' || statement || ' ' || coalesce(quote, ''), '-', ' '))::text,
        '''([^'']+)''', '''' || left(md5(scope), 8) || '\1''', 'g')::tsvector) STORED;
