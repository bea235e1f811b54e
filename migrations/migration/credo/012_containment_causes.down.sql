-- Held directives become stale-target refusals: still open for review, as before.
UPDATE belief_conflict SET cause = 'stale_target' WHERE cause IN ('unrelated', 'ungrounded', 'mass_revision');
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_cause_check;
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_cause_check
    CHECK (cause IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index', 'event'));
