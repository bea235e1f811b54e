-- Dismissed review items teach extraction by their vector (NearestDismissals), so after
-- EMBED_MODEL changes the background re-embedding finds those without a vector of the
-- new model (memory.Store.DismissalScopes) through this index, whatever the number of
-- items resolved otherwise.
CREATE INDEX belief_conflict_dismissed_embed_model_idx ON belief_conflict (embed_model, scope)
    WHERE resolution = 'dismissed';
