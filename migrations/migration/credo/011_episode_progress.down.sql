ALTER TABLE episode DROP COLUMN progress_message, DROP COLUMN progress_offset;
