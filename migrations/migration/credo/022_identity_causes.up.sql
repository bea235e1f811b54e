-- Held for identity: a supersession whose new fact is about another entity than its
-- target (other_entity), and a proposal that two entities are one (same_entity), whose
-- proposed JSON names them. The check is dropped here and added again by 023: Citus
-- runs an ADD CONSTRAINT on a distributed table only alone, in a string of its own.
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_cause_check;
