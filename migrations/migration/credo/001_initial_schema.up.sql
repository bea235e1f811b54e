-- credo's schema: episodes (immutable transcripts), beliefs (bitemporal statements),
-- revision events (every applied revision, also the few-shot examples), conflicts
-- (refused revisions kept for review) and the embedding models in use.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE episode (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope text NOT NULL CHECK (scope <> '' AND length(scope) <= 200),
    external_id text,
    messages jsonb NOT NULL,
    content_hash text NOT NULL,
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    processed_at timestamptz,
    CONSTRAINT episode_scope_content_hash_key UNIQUE (scope, content_hash)
);

CREATE INDEX episode_scope_occurred_at_idx ON episode (scope, occurred_at);

CREATE TABLE belief (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope text NOT NULL CHECK (scope <> ''),
    subject text NOT NULL CHECK (subject <> ''),
    attribute text NOT NULL CHECK (attribute <> ''),
    kind text NOT NULL CHECK (kind IN ('attribute', 'preference', 'relation', 'event', 'plan', 'other')),
    statement text NOT NULL CHECK (statement <> ''),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'retracted', 'forgotten')),
    confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    origin text NOT NULL CHECK (origin IN ('user_stated', 'inferred', 'authoritative')),
    valid_from timestamptz NOT NULL,
    valid_until timestamptz CHECK (valid_until IS NULL OR valid_until >= valid_from),
    recorded_at timestamptz NOT NULL,
    retired_at timestamptz CHECK (retired_at IS NULL OR retired_at >= recorded_at),
    -- One successor per belief; "supersedes" is the reverse of this link.
    superseded_by bigint REFERENCES belief (id),
    episode_id bigint REFERENCES episode (id) ON DELETE SET NULL,
    quote text,
    reinforced_count integer NOT NULL DEFAULT 0,
    last_seen_at timestamptz NOT NULL,
    -- Last time the engine changed the row (insert, retire, reinforce, relink, forget):
    -- consolidation's watermark compares against it.
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Any dimension up to 2,000; the model is stored with the vector and each model
    -- gets its own partial expression index (see memory.EnsureEmbeddingModel).
    embedding vector,
    embed_model text,
    CONSTRAINT belief_embedding_model_check CHECK ((embedding IS NULL) = (embed_model IS NULL))
);

CREATE INDEX belief_scope_status_idx ON belief (scope, status);
CREATE INDEX belief_scope_id_idx ON belief (scope, id);
CREATE INDEX belief_scope_attribute_active_idx ON belief (scope, attribute) WHERE status = 'active';
CREATE INDEX belief_scope_statement_active_idx ON belief (scope, lower(statement)) WHERE status = 'active';
CREATE INDEX belief_superseded_by_idx ON belief (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX belief_episode_id_idx ON belief (episode_id) WHERE episode_id IS NOT NULL;
CREATE INDEX belief_scope_updated_at_idx ON belief (scope, updated_at);

CREATE TABLE revision_event (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope text NOT NULL,
    action text NOT NULL CHECK (action IN ('supersede', 'retract', 'reinforce')),
    reason text NOT NULL CHECK (reason IN ('correction', 'temporal', 'duplicate', 'restated')),
    origin text NOT NULL CHECK (origin IN ('extraction', 'consolidation', 'operator')),
    old_belief_id bigint NOT NULL REFERENCES belief (id),
    new_belief_id bigint REFERENCES belief (id),
    old_statement text NOT NULL,
    new_statement text,
    excerpt text,
    rationale text,
    episode_id bigint REFERENCES episode (id) ON DELETE SET NULL,
    embedding vector,
    embed_model text,
    created_at timestamptz NOT NULL,
    CONSTRAINT revision_event_embedding_model_check CHECK ((embedding IS NULL) = (embed_model IS NULL))
);

CREATE INDEX revision_event_scope_created_at_idx ON revision_event (scope, created_at);
CREATE INDEX revision_event_old_belief_id_idx ON revision_event (old_belief_id);
CREATE INDEX revision_event_new_belief_id_idx ON revision_event (new_belief_id) WHERE new_belief_id IS NOT NULL;

CREATE TABLE belief_conflict (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('entrenchment', 'stale_target', 'time_order', 'invalid_index')),
    origin text NOT NULL CHECK (origin IN ('extraction', 'consolidation', 'operator')),
    action text NOT NULL,
    reason text,
    target_belief_id bigint REFERENCES belief (id),
    proposed jsonb,
    detail text NOT NULL,
    episode_id bigint REFERENCES episode (id) ON DELETE SET NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
    created_at timestamptz NOT NULL
);

CREATE INDEX belief_conflict_scope_status_idx ON belief_conflict (scope, status, created_at);

-- Consolidation's progress per scope: beliefs changed after the watermark are the next
-- pass's seeds; judged clusters are remembered by signature so unchanged ones are
-- never sent to the LLM twice.
CREATE TABLE scope_consolidation (
    scope text PRIMARY KEY,
    watermark timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE consolidation_judgment (
    scope text NOT NULL,
    signature text NOT NULL,
    judged_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, signature)
);

-- A purge leaves only this: that it happened, when, and how many rows went; the scope
-- is kept as a hash, never in clear.
CREATE TABLE purge_tombstone (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope_hash text NOT NULL,
    what text NOT NULL CHECK (what IN ('beliefs', 'scope')),
    counts jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys of the HTTP and MCP servers: only a hash of the secret is stored. A key may
-- act on scopes starting with one of its prefixes, with its rights.
CREATE TABLE api_key (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    prefix text NOT NULL UNIQUE, -- the key's public first characters, to find it and show it
    secret_hash text NOT NULL,
    scope_prefixes text[] NOT NULL CHECK (cardinality(scope_prefixes) > 0),
    rights text[] NOT NULL CHECK (rights <@ ARRAY['write', 'read', 'operate', 'purge']::text[] AND cardinality(rights) > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

-- One row per embedding model in use: its dimension, fixed once seen, and the name of
-- its partial HNSW indexes.
CREATE TABLE embedding_model (
    model text PRIMARY KEY,
    dim integer NOT NULL CHECK (dim BETWEEN 1 AND 2000),
    created_at timestamptz NOT NULL DEFAULT now()
);
