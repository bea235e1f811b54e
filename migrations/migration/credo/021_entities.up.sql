-- The entity registry (docs/design.md, "Entities"): whom each belief is about.
--
-- An entity is keyed by the normalised form of its first name (entity.Key: lower case,
-- single spaces, no leading "the" nor the user's possessive), so that a new entity needs
-- no id back from the database. entity_alias maps every name a scope knows an entity by,
-- its own key included, to that key. belief.entity is the key of the entity the belief
-- is about. Both tables are distributed by scope on Citus, co-located with belief.
CREATE TABLE entity (
    scope text NOT NULL,
    key text NOT NULL CHECK (key <> '' AND length(key) <= 200),
    name text NOT NULL CHECK (length(name) <= 200),
    kind text NOT NULL CHECK (kind IN ('user', 'person', 'organisation', 'place', 'thing', 'other')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE TABLE entity_alias (
    scope text NOT NULL,
    alias text NOT NULL CHECK (alias <> '' AND length(alias) <= 200),
    entity text NOT NULL,
    -- name is the alias as it was said ("Sarah"); alias its key.
    name text NOT NULL CHECK (length(name) <= 200),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, alias)
);
CREATE INDEX entity_alias_entity_idx ON entity_alias (scope, entity);

-- Every belief is about an entity; reads by entity filter one scope's rows, on its
-- existing indexes (no index of its own: on a Citus cluster whose belief table is
-- distributed, a CREATE INDEX in a file of several statements is refused).
-- a row written without one (a test's or a tool's raw
-- insert) is about the user.
ALTER TABLE belief ADD COLUMN entity text NOT NULL DEFAULT 'user';

-- Existing beliefs resolve from their subjects by entity.Key's steps, each its own
-- statement so that Citus runs each on every shard: quotes, whitespace and surrounding
-- punctuation, a leading "the", the user's possessive, then the names of the user.
UPDATE belief SET entity = lower(btrim(regexp_replace(replace(replace(subject, E'\u2019', ''''), E'\u2018', ''''),
    '\s+', ' ', 'g'), '"''`.,;:!?()[]{}<>*_ '));
UPDATE belief SET entity = substr(entity, 5) WHERE entity LIKE 'the %';
UPDATE belief SET entity = btrim(regexp_replace(regexp_replace(entity, '^(user''s |users'' |my )', ''), '^the ', ''),
    '"''`.,;:!?()[]{}<>*_ ')
    WHERE entity ~ '^(user''s |users'' |my ).';
UPDATE belief SET entity = 'user'
    WHERE entity IN ('user', 'i', 'me', 'myself', 'my', 'mine', 'the user', 'user himself', 'user herself', 'user themself', '');
UPDATE belief SET entity = left(entity, 200) WHERE length(entity) > 200;

INSERT INTO entity (scope, key, name, kind, created_at)
SELECT scope, entity, entity, CASE WHEN entity = 'user' THEN 'user' ELSE 'other' END, min(recorded_at)
FROM belief GROUP BY scope, entity;
INSERT INTO entity_alias (scope, alias, entity, name, created_at)
SELECT scope, key, key, name, created_at FROM entity;
