-- History retention (RETAIN_HISTORY): a curator removes beliefs retired longer ago than
-- the period, with what copied their text, and leaves one tombstone per scope and run.
ALTER TABLE purge_tombstone DROP CONSTRAINT purge_tombstone_what_check;
ALTER TABLE purge_tombstone ADD CONSTRAINT purge_tombstone_what_check CHECK (what IN ('beliefs', 'scope', 'history'));

-- The curator finds its scopes among the beliefs retired before the cut: those are the
-- rows it removes, so each run reads what it removes, never the history it keeps.
CREATE INDEX belief_retired_at_idx ON belief (retired_at, scope) WHERE status <> 'active';

-- Removing a belief or an episode looks up the rows naming it (foreign keys, ON DELETE
-- SET NULL): without these, every removed row scanned the whole table.
CREATE INDEX revision_event_episode_id_idx ON revision_event (episode_id) WHERE episode_id IS NOT NULL;
CREATE INDEX belief_conflict_episode_id_idx ON belief_conflict (episode_id) WHERE episode_id IS NOT NULL;
CREATE INDEX belief_conflict_belief_id_idx ON belief_conflict (belief_id) WHERE belief_id IS NOT NULL;
