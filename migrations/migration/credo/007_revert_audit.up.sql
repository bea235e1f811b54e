-- Revert and audit: an operator undoes an applied revision. The undo is a revision
-- event of its own (action revert, origin operator) naming the event it reverts; the
-- reverted event records by which event and when, so that reads, the audit and the
-- few-shot examples tell a revision that stood from one an operator undid.
ALTER TABLE revision_event DROP CONSTRAINT revision_event_action_check;
ALTER TABLE revision_event ADD CONSTRAINT revision_event_action_check
    CHECK (action IN ('supersede', 'retract', 'reinforce', 'revert'));
ALTER TABLE revision_event
    ADD COLUMN reverts bigint,
    ADD COLUMN reverted_by bigint,
    ADD COLUMN reverted_at timestamptz,
    -- What the revision changed, so that its revert puts it back: whether it stored
    -- its new belief (rather than choosing an existing one); for a restatement, the
    -- belief's last_seen_at, valid_from and episode before it. NULL for events written
    -- before this version.
    ADD COLUMN prior jsonb,
    ADD CONSTRAINT revision_event_reverts_check CHECK ((action = 'revert') = (reverts IS NOT NULL)),
    ADD CONSTRAINT revision_event_reverted_check CHECK ((reverted_by IS NULL) = (reverted_at IS NULL));

-- An event is reverted at most once. The scope leads, as in every per-scope index.
CREATE UNIQUE INDEX revision_event_scope_reverts_key ON revision_event (scope, reverts) WHERE reverts IS NOT NULL;
-- The audit and credo_revisions_reverted_total count reverted events by origin.
CREATE INDEX revision_event_reverted_idx ON revision_event (scope, origin) WHERE reverted_by IS NOT NULL;
