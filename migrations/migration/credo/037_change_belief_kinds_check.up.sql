-- The kinds of change, with the beliefs' (036).
ALTER TABLE change ADD CONSTRAINT change_kind_check CHECK (kind IN ('belief.created', 'belief.forgotten', 'revision.applied',
    'revision.reverted', 'review.opened', 'review.resolved', 'episode.failed', 'scope.purged'));
