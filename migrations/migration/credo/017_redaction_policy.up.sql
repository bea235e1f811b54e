-- Redaction at the door (docs/design.md, "Data minimisation"): what redaction replaced in
-- a transcript before it was stored, as counts per kind ({"card": 1, "api_key": 2}),
-- never the values; NULL when nothing was.
ALTER TABLE episode ADD COLUMN redactions jsonb CHECK (redactions IS NULL OR jsonb_typeof(redactions) = 'object');

-- An organisation's policy for every scope starting with scope_prefix: instructions to
-- extraction and consolidation (at most 2,000 characters), patterns of its own to
-- redact ([{"name": ..., "regex": ...}]), and the kinds of secret it redacts (NULL: the
-- deployment's REDACT). A scope's policy is the one of its longest prefix. Small and
-- read by prefix: a reference table on Citus.
CREATE TABLE scope_policy (
    scope_prefix text PRIMARY KEY CHECK (length(scope_prefix) <= 200),
    instructions text NOT NULL DEFAULT '' CHECK (length(instructions) <= 2000),
    patterns jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(patterns) = 'array'),
    redact text[],
    updated_at timestamptz NOT NULL
);
