UPDATE belief SET status = 'retracted', retired_at = now() WHERE status = 'held';
ALTER TABLE belief DROP CONSTRAINT belief_status_check;
