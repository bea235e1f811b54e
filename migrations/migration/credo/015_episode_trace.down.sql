ALTER TABLE episode DROP COLUMN trace_parent;
