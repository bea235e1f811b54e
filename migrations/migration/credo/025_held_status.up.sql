-- A held replacement waits with its review item, never current: status held. The check
-- is dropped here and added again by 026, as 022 and 023 do for Citus.
ALTER TABLE belief DROP CONSTRAINT belief_status_check;
