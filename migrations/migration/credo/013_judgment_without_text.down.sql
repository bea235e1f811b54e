-- Nothing to restore: the deleted signatures were a cache of judgments, and held text.
SELECT 1;
