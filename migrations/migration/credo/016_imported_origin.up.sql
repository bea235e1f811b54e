-- Memory imported from another system (`beliefs import --from mem0`) keeps where it came
-- from: origin imported. Such a belief has no transcript credo could quote, so the engine
-- entrenches it no more than an inference (memory/rules.go): the user's own words, and
-- consolidation, may replace it.
ALTER TABLE belief DROP CONSTRAINT belief_origin_check;
ALTER TABLE belief ADD CONSTRAINT belief_origin_check
    CHECK (origin IN ('user_stated', 'inferred', 'authoritative', 'imported'));
