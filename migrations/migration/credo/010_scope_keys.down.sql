-- Back to keys on id alone. Only on plain PostgreSQL: a table Citus distributed cannot
-- have a unique id of its own.
ALTER TABLE belief
    DROP CONSTRAINT belief_episode_id_fkey,
    DROP CONSTRAINT belief_superseded_by_fkey;
ALTER TABLE revision_event
    DROP CONSTRAINT revision_event_episode_id_fkey,
    DROP CONSTRAINT revision_event_old_belief_id_fkey,
    DROP CONSTRAINT revision_event_new_belief_id_fkey;
ALTER TABLE belief_conflict
    DROP CONSTRAINT belief_conflict_episode_id_fkey,
    DROP CONSTRAINT belief_conflict_target_belief_id_fkey,
    DROP CONSTRAINT belief_conflict_belief_id_fkey;
ALTER TABLE belief_dependency
    DROP CONSTRAINT belief_dependency_belief_id_fkey,
    DROP CONSTRAINT belief_dependency_basis_id_fkey,
    DROP CONSTRAINT belief_dependency_pkey;

ALTER TABLE episode DROP CONSTRAINT episode_pkey, ADD CONSTRAINT episode_pkey PRIMARY KEY (id);
DROP INDEX episode_id_idx;
ALTER TABLE belief DROP CONSTRAINT belief_pkey, ADD CONSTRAINT belief_pkey PRIMARY KEY (id);
DROP INDEX belief_id_idx;
CREATE INDEX belief_scope_id_idx ON belief (scope, id);
ALTER TABLE revision_event DROP CONSTRAINT revision_event_pkey, ADD CONSTRAINT revision_event_pkey PRIMARY KEY (id);
DROP INDEX revision_event_id_idx;
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_pkey, ADD CONSTRAINT belief_conflict_pkey PRIMARY KEY (id);
DROP INDEX belief_conflict_id_idx;
ALTER TABLE belief_dependency DROP COLUMN scope, ADD CONSTRAINT belief_dependency_pkey PRIMARY KEY (belief_id, basis_id);

ALTER TABLE belief
    ADD CONSTRAINT belief_episode_id_fkey FOREIGN KEY (episode_id) REFERENCES episode (id) ON DELETE SET NULL,
    ADD CONSTRAINT belief_superseded_by_fkey FOREIGN KEY (superseded_by) REFERENCES belief (id);
ALTER TABLE revision_event
    ADD CONSTRAINT revision_event_episode_id_fkey FOREIGN KEY (episode_id) REFERENCES episode (id) ON DELETE SET NULL,
    ADD CONSTRAINT revision_event_old_belief_id_fkey FOREIGN KEY (old_belief_id) REFERENCES belief (id),
    ADD CONSTRAINT revision_event_new_belief_id_fkey FOREIGN KEY (new_belief_id) REFERENCES belief (id);
ALTER TABLE belief_conflict
    ADD CONSTRAINT belief_conflict_episode_id_fkey FOREIGN KEY (episode_id) REFERENCES episode (id) ON DELETE SET NULL,
    ADD CONSTRAINT belief_conflict_target_belief_id_fkey FOREIGN KEY (target_belief_id) REFERENCES belief (id),
    ADD CONSTRAINT belief_conflict_belief_id_fkey FOREIGN KEY (belief_id) REFERENCES belief (id);
ALTER TABLE belief_dependency
    ADD CONSTRAINT belief_dependency_belief_id_fkey FOREIGN KEY (belief_id) REFERENCES belief (id) ON DELETE CASCADE,
    ADD CONSTRAINT belief_dependency_basis_id_fkey FOREIGN KEY (basis_id) REFERENCES belief (id) ON DELETE CASCADE;
