DROP INDEX IF EXISTS revision_event_reverted_idx;
DROP INDEX IF EXISTS revision_event_scope_reverts_key;
DELETE FROM revision_event WHERE action = 'revert';
ALTER TABLE revision_event
    DROP CONSTRAINT revision_event_reverted_check,
    DROP CONSTRAINT revision_event_reverts_check,
    DROP COLUMN prior,
    DROP COLUMN reverted_at,
    DROP COLUMN reverted_by,
    DROP COLUMN reverts;
ALTER TABLE revision_event DROP CONSTRAINT revision_event_action_check;
ALTER TABLE revision_event ADD CONSTRAINT revision_event_action_check
    CHECK (action IN ('supersede', 'retract', 'reinforce'));
