-- Back to shared per-model indexes: the scopes' own indexes go; the shared ones are
-- created again by the previous version at its first vector write.
DO $$
DECLARE
    ix record;
BEGIN
    FOR ix IN SELECT name FROM scope_vector_index LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', ix.name);
    END LOOP;
END
$$;
DROP TABLE scope_vector_index;
DROP INDEX belief_embed_model_scope_idx;
DROP INDEX revision_event_embed_model_scope_idx;
DROP INDEX revision_event_scope_model_idx;
ALTER TABLE belief ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE revision_event ALTER COLUMN embedding SET STORAGE EXTERNAL;
