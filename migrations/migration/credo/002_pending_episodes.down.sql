DROP INDEX IF EXISTS episode_scope_pending_idx;
