-- Keys ready to distribute by scope (docs/design.md, "Keys that carry the scope"): Citus
-- shards a table by one column and keeps a unique constraint or a foreign key only when
-- it includes that column. Every table of a scope's data gets a primary key that leads
-- with scope, and its references to rows of the same scope become composite (scope, id):
-- such a reference never leaves its scope, so on Citus it never leaves its shard. Ids stay
-- globally unique identities, and a plain index on id keeps lookups by id alone fast.
-- References within a scope are what the engine always wrote (the applier checks that
-- candidates and the episode belong to the batch's scope): if a row broke that, adding
-- its foreign key fails and the whole migration rolls back, nothing changed.

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

-- A dependency lives in the scope of the belief that rests on it (its basis is of the
-- same scope: the applier only offers the scope's own beliefs as bases).
ALTER TABLE belief_dependency ADD COLUMN scope text;
UPDATE belief_dependency d SET scope = b.scope FROM belief b WHERE b.id = d.belief_id;
ALTER TABLE belief_dependency ALTER COLUMN scope SET NOT NULL;

ALTER TABLE episode DROP CONSTRAINT episode_pkey, ADD CONSTRAINT episode_pkey PRIMARY KEY (scope, id);
CREATE INDEX episode_id_idx ON episode (id);
ALTER TABLE belief DROP CONSTRAINT belief_pkey, ADD CONSTRAINT belief_pkey PRIMARY KEY (scope, id);
-- The primary key is this index now.
DROP INDEX belief_scope_id_idx;
CREATE INDEX belief_id_idx ON belief (id);
ALTER TABLE revision_event DROP CONSTRAINT revision_event_pkey, ADD CONSTRAINT revision_event_pkey PRIMARY KEY (scope, id);
CREATE INDEX revision_event_id_idx ON revision_event (id);
ALTER TABLE belief_conflict DROP CONSTRAINT belief_conflict_pkey, ADD CONSTRAINT belief_conflict_pkey PRIMARY KEY (scope, id);
CREATE INDEX belief_conflict_id_idx ON belief_conflict (id);
ALTER TABLE belief_dependency ADD CONSTRAINT belief_dependency_pkey PRIMARY KEY (scope, belief_id, basis_id);

-- References to an episode used to be cleared by ON DELETE SET NULL. Citus refuses SET
-- NULL on a foreign key that includes the distribution column (even SET NULL (episode_id),
-- which would leave the scope), so whoever removes episodes clears the references first
-- (memory's purge and curator), and the key only checks.
ALTER TABLE belief
    ADD CONSTRAINT belief_episode_id_fkey FOREIGN KEY (scope, episode_id)
        REFERENCES episode (scope, id),
    ADD CONSTRAINT belief_superseded_by_fkey FOREIGN KEY (scope, superseded_by)
        REFERENCES belief (scope, id);
ALTER TABLE revision_event
    ADD CONSTRAINT revision_event_episode_id_fkey FOREIGN KEY (scope, episode_id)
        REFERENCES episode (scope, id),
    ADD CONSTRAINT revision_event_old_belief_id_fkey FOREIGN KEY (scope, old_belief_id)
        REFERENCES belief (scope, id),
    ADD CONSTRAINT revision_event_new_belief_id_fkey FOREIGN KEY (scope, new_belief_id)
        REFERENCES belief (scope, id);
ALTER TABLE belief_conflict
    ADD CONSTRAINT belief_conflict_episode_id_fkey FOREIGN KEY (scope, episode_id)
        REFERENCES episode (scope, id),
    ADD CONSTRAINT belief_conflict_target_belief_id_fkey FOREIGN KEY (scope, target_belief_id)
        REFERENCES belief (scope, id),
    ADD CONSTRAINT belief_conflict_belief_id_fkey FOREIGN KEY (scope, belief_id)
        REFERENCES belief (scope, id);
ALTER TABLE belief_dependency
    ADD CONSTRAINT belief_dependency_belief_id_fkey FOREIGN KEY (scope, belief_id)
        REFERENCES belief (scope, id) ON DELETE CASCADE,
    ADD CONSTRAINT belief_dependency_basis_id_fkey FOREIGN KEY (scope, basis_id)
        REFERENCES belief (scope, id) ON DELETE CASCADE;
