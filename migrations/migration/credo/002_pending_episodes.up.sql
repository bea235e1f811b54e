-- Extraction works a scope's pending episodes one at a time, oldest first: this index
-- answers "the next pending episode of a scope" and "which scopes have pending
-- episodes" without reading applied ones, however long the history. received_at is
-- included so that the backlog (its size and oldest arrival) is read from the index.
CREATE INDEX episode_scope_pending_idx ON episode (scope, occurred_at, id) INCLUDE (received_at) WHERE state = 'pending';

-- Failed episodes are few; the backlog metric and `beliefs scopes` count them.
CREATE INDEX episode_scope_failed_idx ON episode (scope) WHERE state = 'failed';
