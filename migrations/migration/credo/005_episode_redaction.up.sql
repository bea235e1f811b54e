-- A purge that removes some beliefs redacts, rather than deletes, an episode that other
-- beliefs still come from: the purged spans of its transcript are replaced, and this
-- records when. NULL for an episode never redacted.
ALTER TABLE episode ADD COLUMN redacted_at timestamptz;
