ALTER TABLE belief ADD CONSTRAINT belief_status_check CHECK (status IN ('active', 'superseded', 'retracted', 'forgotten'));
