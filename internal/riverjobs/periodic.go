package riverjobs

import (
	"time"

	"github.com/riverqueue/river"
)

// OnceOnQueue puts a job on queue, once while it waits or runs (UniqueWhileUnfinished):
// periodic jobs do not pile up behind a slow one.
func OnceOnQueue(queue string) river.InsertOpts {
	return river.InsertOpts{Queue: queue, UniqueOpts: UniqueWhileUnfinished()}
}

// Periodic schedules args every interval (def when it is not positive), and once at
// start. Every process configures it; River runs periodic jobs on the elected leader
// only.
func Periodic(args river.JobArgs, interval, def time.Duration) *river.PeriodicJob {
	if interval <= 0 {
		interval = def
	}
	return river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil },
		&river.PeriodicJobOpts{ID: args.Kind(), RunOnStart: true})
}
