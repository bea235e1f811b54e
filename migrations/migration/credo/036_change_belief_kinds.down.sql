DELETE FROM change WHERE kind IN ('belief.created', 'belief.forgotten');
ALTER TABLE change ADD CONSTRAINT change_kind_check CHECK (kind IN ('revision.applied', 'revision.reverted', 'review.opened',
    'review.resolved', 'episode.failed', 'scope.purged'));
