DROP TABLE IF EXISTS embedding_model;
DROP TABLE IF EXISTS belief_conflict;
DROP TABLE IF EXISTS revision_event;
DROP TABLE IF EXISTS belief;
DROP TABLE IF EXISTS episode;
