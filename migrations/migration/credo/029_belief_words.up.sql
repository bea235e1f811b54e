-- The words of each belief, for the full-text ranking that recall fuses with the vector
-- one (docs/design.md, "Recall by vectors, words and entities"): subject, attribute,
-- statement and quote, parsed by the 'simple' configuration, which lower-cases and keeps
-- every token as said: codes, numbers, versions and names are not stemmed away. Hyphens
-- are read as spaces first, so that "KX-5521" is the words kx and 5521 wherever it is
-- written (the default parser would read "-5521" as a signed number). Adding a stored
-- generated column rewrites the table once.
ALTER TABLE belief ADD COLUMN words tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, replace(subject || ' ' || attribute || ' ' || statement || ' ' || coalesce(quote, ''), '-', ' '))) STORED;
