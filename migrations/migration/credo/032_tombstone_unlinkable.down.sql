-- The counts of tombstones written since are gone, and cannot be computed again.
ALTER TABLE purge_tombstone ADD COLUMN counts jsonb NOT NULL DEFAULT '{}';
ALTER TABLE purge_tombstone ALTER COLUMN counts DROP DEFAULT;
ALTER TABLE purge_tombstone ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval(pg_get_serial_sequence('purge_tombstone', 'id'), coalesce((SELECT max(id) FROM purge_tombstone), 0) + 1, false);
