DROP INDEX IF EXISTS episode_scope_failed_idx;
DROP INDEX IF EXISTS episode_scope_pending_idx;
