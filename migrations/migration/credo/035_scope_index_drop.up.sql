-- The scope indexes to drop (memory.Store.DropErasedIndexes): those of an erased or
-- shrunk scope, and those whose build has not registered them yet. A row is written in
-- the transaction that unregisters the index (a purge, under the scope's lock), so the
-- drop, which cannot run in a transaction, is a durable to-do that the worker finishes
-- whatever becomes of the caller. By the index's name only: names are random, and say
-- nothing of the scope.
CREATE TABLE scope_index_drop (
    name text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);
