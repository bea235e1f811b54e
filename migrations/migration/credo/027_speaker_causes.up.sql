-- Held by identity: a directive only a document grounds (not_from_user), and one that
-- identity did not settle nor a second opinion confirm (second_opinion). The check is
-- dropped here and added again by 028.
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_cause_check;
