-- A tombstone keeps the day of its purge, not its time: the purge's time is also on the
-- rows it left in the scope (a redacted episode's redacted_at, a relinked belief's
-- updated_at), and matched the tombstone to the scope it keeps no trace of (migration
-- 009). Written tombstones lose their time of day (UTC); new ones get the day from
-- their writer, which must give it: no default time.
UPDATE purge_tombstone SET created_at = date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
ALTER TABLE purge_tombstone ALTER COLUMN created_at DROP DEFAULT;
