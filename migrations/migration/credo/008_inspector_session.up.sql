-- A browser logged in to the inspector holds a random session id, not its API key; only
-- the id's SHA-256 is stored. A session ends when it expires, at logout, or with its key.
CREATE TABLE inspector_session (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    key_id bigint NOT NULL REFERENCES api_key (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX inspector_session_key_id_idx ON inspector_session (key_id);
CREATE INDEX inspector_session_expires_at_idx ON inspector_session (expires_at);
