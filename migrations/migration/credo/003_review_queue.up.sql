-- Revision semantics of the second round: beliefs concluded from others, flagged when
-- their basis changes, and a review queue whose items an operator (or the next
-- consolidation pass) closes.

-- needs_review is true while a belief has an open basis_changed item: a basis it was
-- concluded from was superseded, retracted, forgotten or purged.
ALTER TABLE belief ADD COLUMN needs_review boolean NOT NULL DEFAULT false;
CREATE INDEX belief_scope_needs_review_idx ON belief (scope) WHERE needs_review;

-- A belief rests on the beliefs it was concluded from. Rows go with either belief when
-- it is purged, so no id dangles.
CREATE TABLE belief_dependency (
    belief_id bigint NOT NULL REFERENCES belief (id) ON DELETE CASCADE,
    basis_id bigint NOT NULL REFERENCES belief (id) ON DELETE CASCADE,
    PRIMARY KEY (belief_id, basis_id),
    CHECK (belief_id <> basis_id)
);
CREATE INDEX belief_dependency_basis_id_idx ON belief_dependency (basis_id);

-- Review items: kind says what the operator reviews (a refused revision, or a belief
-- whose basis changed); cause keeps why a revision was refused. belief_id is the belief
-- the item is about (the dependent; or, for a refusal, the belief that was to replace
-- the target, when one exists). resolution says how the item was closed.
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_kind_check;
ALTER TABLE belief_conflict
    ADD COLUMN cause text CHECK (cause IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index', 'event')),
    ADD COLUMN belief_id bigint REFERENCES belief (id),
    ADD COLUMN resolution text CHECK (resolution IN ('applied', 'dismissed', 'kept', 'retracted', 'superseded', 'forgotten')),
    ADD COLUMN note text,
    ADD COLUMN resolved_at timestamptz,
    ADD COLUMN embedding vector,
    ADD COLUMN embed_model text;
UPDATE belief_conflict SET cause = kind, kind = 'refused';
UPDATE belief_conflict SET status = 'resolved', resolution = 'dismissed', resolved_at = now() WHERE status = 'dismissed';
UPDATE belief_conflict SET resolution = 'applied', resolved_at = now() WHERE status = 'resolved' AND resolution IS NULL;
ALTER TABLE belief_conflict
    ADD CONSTRAINT belief_conflict_kind_check CHECK (kind IN ('refused', 'basis_changed')),
    ADD CONSTRAINT belief_conflict_cause_check_kind CHECK ((kind = 'refused') = (cause IS NOT NULL)),
    ADD CONSTRAINT belief_conflict_resolution_check_status CHECK ((status = 'open') = (resolution IS NULL)),
    ADD CONSTRAINT belief_conflict_embedding_model_check CHECK ((embedding IS NULL) = (embed_model IS NULL));
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_status_check;
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_status_check CHECK (status IN ('open', 'resolved'));
CREATE INDEX belief_conflict_belief_id_open_idx ON belief_conflict (belief_id) WHERE status = 'open';
CREATE INDEX belief_conflict_target_belief_id_idx ON belief_conflict (target_belief_id) WHERE target_belief_id IS NOT NULL;
