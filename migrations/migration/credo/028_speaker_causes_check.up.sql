-- The causes of a refusal, with those of speaker and second opinion (027).
ALTER TABLE belief_conflict ADD CONSTRAINT belief_conflict_cause_check
    CHECK (cause IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index', 'event', 'unrelated', 'ungrounded',
        'mass_revision', 'other_entity', 'same_entity', 'not_from_user', 'second_opinion'));
