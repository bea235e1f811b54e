DROP INDEX belief_scope_entity_idx;
