-- Exact per-scope search (docs/design.md, "Exact per-scope search"): no vector index is
-- shared by scopes any more. A shared HNSW index stops its iterative scan after
-- hnsw.max_scan_tuples rows of any scope, so a scope crowded out by others found fewer
-- of its beliefs than asked, or none. A scope's reads now scan its own rows exactly, or,
-- above the exact limit, an HNSW index of its own, registered here.
DO $$
DECLARE
    ix record;
BEGIN
    FOR ix IN
        -- pg_class, not pg_indexes: the view would describe the indexes of every schema.
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind = 'i'
            AND c.relname ~ '^(belief|revision_event)_embedding_[0-9a-f]{12}_idx$'
    LOOP
        EXECUTE format('DROP INDEX %I', ix.relname);
    END LOOP;
END
$$;

-- A scope's exact scan reads each of its vectors: kept in the row (up to 2,000
-- dimensions fit a page), a vector costs no TOAST lookup. Rows written from now on.
ALTER TABLE belief ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE revision_event ALTER COLUMN embedding SET STORAGE MAIN;

-- The exact scan of a scope's events (few-shot examples) reads them by scope.
CREATE INDEX revision_event_scope_model_idx ON revision_event (scope, embed_model) WHERE action <> 'reinforce';

-- The scopes above the exact limit that have an HNSW index of their own on a table, for
-- a model (memory.Store.IndexScope). Reads use the index once its row exists.
CREATE TABLE scope_vector_index (
    scope text NOT NULL,
    tbl text NOT NULL CHECK (tbl IN ('belief', 'revision_event')),
    model text NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, tbl, model)
);

-- Rows without a vector of the current embedding model (EMBED_MODEL changed, or an
-- embedding call failed) are found by model, however large the tables: the background
-- re-embedding and the count of what is left read these.
CREATE INDEX belief_embed_model_scope_idx ON belief (embed_model, scope);
CREATE INDEX revision_event_embed_model_scope_idx ON revision_event (embed_model, scope);
