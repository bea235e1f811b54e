-- The W3C traceparent of the span that enqueued an episode, when tracing was on: one
-- extraction job works a scope's whole backlog, so the job's own trace context (in its
-- River metadata) is that of the first enqueue only; each episode's extraction joins the
-- trace of its own enqueue by this (docs/operations.md, "Tracing"). Random ids, no user
-- data; NULL when tracing was off.
ALTER TABLE episode ADD COLUMN trace_parent text CHECK (length(trace_parent) <= 128);
