ALTER TABLE belief DROP COLUMN entity;
DROP TABLE entity_alias;
DROP TABLE entity;
