-- Slot synonyms a scope learned (docs/design.md, "Revisions by identity"): two
-- attributes that name one slot of an entity, as an operator's decision on a held
-- revision or a second opinion said. The pair is kept normalised, the lesser name
-- first. Distributed by scope on Citus, co-located with belief.
CREATE TABLE slot_synonym (
    scope text NOT NULL,
    slot text NOT NULL CHECK (slot <> '' AND length(slot) <= 200),
    synonym text NOT NULL CHECK (synonym <> '' AND length(synonym) <= 200),
    learned_from text NOT NULL CHECK (learned_from IN ('operator', 'second_opinion')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, slot, synonym),
    CHECK (slot < synonym)
);
