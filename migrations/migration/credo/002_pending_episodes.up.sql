-- Extraction works a scope's pending episodes one at a time, oldest first: this index
-- answers "the next pending episode of a scope" and "which scopes have pending
-- episodes" without reading applied ones, however long the history.
CREATE INDEX episode_scope_pending_idx ON episode (scope, occurred_at, id) WHERE state = 'pending';
