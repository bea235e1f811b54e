DROP TABLE IF EXISTS purge_tombstone;
DROP TABLE IF EXISTS consolidation_judgment;
DROP TABLE IF EXISTS scope_consolidation;
DROP TABLE IF EXISTS embedding_model;
DROP TABLE IF EXISTS belief_conflict;
DROP TABLE IF EXISTS revision_event;
DROP TABLE IF EXISTS belief;
DROP TABLE IF EXISTS episode;
