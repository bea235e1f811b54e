-- The feed announces beliefs created and soft-forgotten (belief.created,
-- belief.forgotten). The check of change's kinds is dropped here and added again by 037:
-- Citus runs an ADD CONSTRAINT on a distributed table only alone, in a string of its own.
ALTER TABLE change DROP CONSTRAINT change_kind_check;
