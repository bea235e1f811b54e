-- A scope's beliefs about one entity, for the entity ranking of recall (the current
-- beliefs of the entities a question names) and the entity reads.
CREATE INDEX belief_scope_entity_idx ON belief (scope, entity) WHERE status = 'active';
