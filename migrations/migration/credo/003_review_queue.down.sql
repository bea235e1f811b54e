DROP INDEX IF EXISTS belief_conflict_target_belief_id_idx;
DROP INDEX IF EXISTS belief_conflict_belief_id_open_idx;
DELETE FROM belief_conflict WHERE kind = 'basis_changed';
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_status_check;
UPDATE belief_conflict SET status = 'dismissed' WHERE resolution = 'dismissed';
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_status_check CHECK (status IN ('open', 'resolved', 'dismissed'));
ALTER TABLE belief_conflict
    DROP CONSTRAINT belief_conflict_kind_check,
    DROP CONSTRAINT belief_conflict_cause_check_kind,
    DROP CONSTRAINT belief_conflict_resolution_check_status,
    DROP CONSTRAINT belief_conflict_embedding_model_check;
UPDATE belief_conflict SET kind = CASE WHEN cause = 'event' THEN 'stale_target' ELSE cause END;
ALTER TABLE belief_conflict
    DROP COLUMN cause, DROP COLUMN belief_id, DROP COLUMN resolution, DROP COLUMN note,
    DROP COLUMN resolved_at, DROP COLUMN embedding, DROP COLUMN embed_model;
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_kind_check
    CHECK (kind IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index'));
DROP TABLE IF EXISTS belief_dependency;
DROP INDEX IF EXISTS belief_scope_needs_review_idx;
ALTER TABLE belief DROP COLUMN needs_review;
