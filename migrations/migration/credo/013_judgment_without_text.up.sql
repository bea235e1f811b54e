-- A consolidation judgment's signature was a SHA-256 of its members' statements, from
-- which a guessed statement is matched, a purged or curated one too (the curator left
-- them behind). Signatures are now of the members' ids and start times only
-- (docs/design.md, "Consolidation's judged clusters"): the old ones are deleted, and a
-- cluster whose seed changes again is judged once more.
DELETE FROM consolidation_judgment;
