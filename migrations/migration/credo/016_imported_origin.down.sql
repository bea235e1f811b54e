-- Imported beliefs become inferences, the origin the engine treated them as.
UPDATE belief SET origin = 'inferred' WHERE origin = 'imported';
ALTER TABLE belief DROP CONSTRAINT belief_origin_check;
ALTER TABLE belief ADD CONSTRAINT belief_origin_check
    CHECK (origin IN ('user_stated', 'inferred', 'authoritative'));
