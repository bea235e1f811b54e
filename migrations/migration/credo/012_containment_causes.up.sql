-- The containment guards hold a model's destructive directive for review when it is not
-- related to its target, not grounded in the episode, or past the episode's cap
-- (docs/design.md, "Containment").
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_cause_check;
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_cause_check
    CHECK (cause IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index', 'event', 'unrelated', 'ungrounded', 'mass_revision'));
