-- The times of day are gone for good; only the default comes back.
ALTER TABLE purge_tombstone ALTER COLUMN created_at SET DEFAULT now();
