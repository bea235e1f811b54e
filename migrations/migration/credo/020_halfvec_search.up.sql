-- A compact copy of each belief's vector for nearest-neighbour reads of current beliefs
-- (docs/design.md, "Exact per-scope search"): halfvec, 2 bytes a dimension, kept with
-- the scope's id in a covering index, so that a read ranks a scope's active beliefs
-- from the index alone (an index-only scan of its entries, side by side) and re-ranks
-- the nearest few exactly from their full vectors (memory/search.go). Measured
-- (BENCHMARKS.md row 6e), the true k nearest sit within the first k + 1 of the halfvec
-- order.
--
-- The copy is of the vector made unit length: cosine distance ignores length, and every
-- component of a unit vector fits halfvec's range (a raw component of 65,520 or more
-- would not, and the write would fail). It exists only where its index entry fits
-- btree's 2,704 bytes: up to 1,024 dimensions, and a scope and model name of at most
-- 125 characters together (500 bytes in any server encoding). The same bound is
-- memory.halfvecFits: elsewhere reads keep the exact scan.
--
-- Adding a stored generated column rewrites the table once. halfvec's storage is
-- EXTERNAL, so in a row past 2 KB (768 dimensions and more) the copy lies out of line and
-- the row the exact scan and every other read fetch stays as it was.
ALTER TABLE belief ADD COLUMN embedding_half halfvec GENERATED ALWAYS AS (
    CASE WHEN vector_dims(embedding) <= 1024 AND length(scope) + length(embed_model) <= 125
        THEN l2_normalize(embedding)::halfvec END) STORED;
CREATE INDEX belief_scope_half_idx ON belief (scope, embed_model) INCLUDE (id, embedding_half)
    WHERE status = 'active' AND embedding_half IS NOT NULL;
