-- The change feed and webhooks (docs/api.md, "Changes and webhooks").
--
-- change_head holds each scope's last change position. A writer announcing changes
-- takes the scope's row (an upsert) and keeps its lock until it commits, so a scope's
-- positions are given in commit order: a reader that has seen position n of a scope has
-- seen every change of it committed before, and a cursor (scope -> position) resumes
-- exactly. Distributed by scope on Citus.
CREATE TABLE change_head (
    scope text PRIMARY KEY,
    position bigint NOT NULL CHECK (position > 0),
    updated_at timestamptz NOT NULL
);

-- One row per change: what changed (kind) and which row tells it (ref_id: a revision
-- event, a review item or an episode), never its text; the text is read when the change
-- is read or delivered, so what a purge erased is never given. A scope purge keeps only
-- its scope.purged row, with the counts.
CREATE TABLE change (
    scope text NOT NULL,
    position bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN ('revision.applied', 'revision.reverted', 'review.opened', 'review.resolved',
        'episode.failed', 'scope.purged')),
    ref_id bigint,
    counts jsonb,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, position)
);
CREATE UNIQUE INDEX change_ref_idx ON change (scope, kind, ref_id) WHERE ref_id IS NOT NULL;

-- A subscription: changes of the scopes starting with scope_prefix, of the kinds in
-- events (empty: all), are posted to url. secret and previous_secret are sealed with
-- WEBHOOK_SECRET_KEY (AES-256-GCM), so the database alone cannot sign; previous_secret
-- still signs until previous_until (a rotation). Few rows, read by prefix: a reference
-- table on Citus.
CREATE TABLE webhook (
    id bigserial PRIMARY KEY,
    scope_prefix text NOT NULL CHECK (length(scope_prefix) <= 200),
    url text NOT NULL CHECK (length(url) <= 2000),
    events text[] NOT NULL DEFAULT '{}',
    secret bytea NOT NULL,
    previous_secret bytea,
    previous_until timestamptz,
    created_by text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    -- failing_since: deliveries have failed since then, with no success; after
    -- WEBHOOK_DISABLE_AFTER the webhook is disabled (disabled_at, disabled_reason).
    failing_since timestamptz,
    disabled_at timestamptz,
    disabled_reason text
);

-- One delivery of one change to one webhook. id is the message's webhook-id, the same
-- on every try. Sent in position order per (scope, webhook): a delivery waits while an
-- earlier one is pending. Distributed by scope on Citus.
CREATE TABLE webhook_delivery (
    scope text NOT NULL,
    webhook_id bigint NOT NULL,
    position bigint NOT NULL,
    id bigserial NOT NULL,
    kind text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    first_failed_at timestamptz,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status integer,
    last_error text,
    done_at timestamptz,
    PRIMARY KEY (scope, webhook_id, position)
);
CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (webhook_id, scope, position) WHERE state = 'pending';
