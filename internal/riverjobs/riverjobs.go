// Package riverjobs holds what credo's River jobs share: their insertion, uniqueness,
// schedule and transactional completion, and the reading of River's queue through
// River's API: river_job's schema is not a public contract, so nothing outside River's
// client queries it (memory's purge excepted, see memory/river_jobs.go).
package riverjobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Lister lists River jobs; *river.Client[pgx.Tx] is one.
type Lister interface {
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// UnfinishedStates are the states of a job still to run: waiting, running or due for a
// retry. The others (completed, cancelled, discarded) are final.
var UnfinishedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// page is the most jobs River lists at once.
const page = 10_000

// Unfinished counts the jobs of kinds (none: of every kind) in UnfinishedStates.
func Unfinished(ctx context.Context, jobs Lister, kinds ...string) (int, error) {
	params := river.NewJobListParams().States(UnfinishedStates...).First(page)
	if len(kinds) > 0 {
		params = params.Kinds(kinds...)
	}
	n := 0
	for {
		res, err := jobs.JobList(ctx, params)
		if err != nil {
			return 0, fmt.Errorf("count jobs: %w", err)
		}
		n += len(res.Jobs)
		if len(res.Jobs) < page || res.LastCursor == nil {
			return n, nil
		}
		params = params.After(res.LastCursor)
	}
}

// AnyUnfinished reports whether a job of kinds (none: of every kind) is in
// UnfinishedStates: one row listed, for a poll that only waits for the queue to empty.
func AnyUnfinished(ctx context.Context, jobs Lister, kinds ...string) (bool, error) {
	params := river.NewJobListParams().States(UnfinishedStates...).First(1)
	if len(kinds) > 0 {
		params = params.Kinds(kinds...)
	}
	res, err := jobs.JobList(ctx, params)
	if err != nil {
		return false, fmt.Errorf("look for unfinished jobs: %w", err)
	}
	return len(res.Jobs) > 0, nil
}
