DROP INDEX IF EXISTS belief_scope_half_idx;
ALTER TABLE belief DROP COLUMN IF EXISTS embedding_half;
