UPDATE belief_conflict SET cause = 'stale_target' WHERE cause IN ('not_from_user', 'second_opinion');
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_cause_check
    CHECK (cause IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index', 'event', 'unrelated', 'ungrounded',
        'mass_revision', 'other_entity', 'same_entity'));
