DROP INDEX IF EXISTS belief_conflict_belief_id_idx;
DROP INDEX IF EXISTS belief_conflict_episode_id_idx;
DROP INDEX IF EXISTS revision_event_episode_id_idx;
DROP INDEX IF EXISTS belief_retired_at_idx;
-- A history tombstone still records that beliefs were purged.
UPDATE purge_tombstone SET what = 'beliefs' WHERE what = 'history';
ALTER TABLE purge_tombstone DROP CONSTRAINT purge_tombstone_what_check;
ALTER TABLE purge_tombstone ADD CONSTRAINT purge_tombstone_what_check CHECK (what IN ('beliefs', 'scope'));
