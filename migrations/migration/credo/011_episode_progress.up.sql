-- A transcript longer than the model's window is extracted in consecutive segments, each
-- applied in its own transaction together with where it ended, so that a crash or a
-- failed segment resumes there and no segment is applied twice (docs/design.md, "Long
-- conversations"): the message the next segment starts at, and the byte offset in it
-- (a message longer than a segment is cut between words).
ALTER TABLE episode
    ADD COLUMN progress_message integer NOT NULL DEFAULT 0 CHECK (progress_message >= 0),
    ADD COLUMN progress_offset integer NOT NULL DEFAULT 0 CHECK (progress_offset >= 0);
