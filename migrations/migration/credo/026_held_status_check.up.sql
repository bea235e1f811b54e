-- The statuses of a belief, with held (025).
ALTER TABLE belief ADD CONSTRAINT belief_status_check
    CHECK (status IN ('active', 'superseded', 'retracted', 'forgotten', 'held'));
