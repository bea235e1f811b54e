package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/credohq/credo/memory"
)

// WatchReverts registers credo_revisions_reverted_total, the revisions operators
// reverted by the origin of the revision, read from the database at each scrape: a
// revert made with the CLI, the API or the inspector, by any process, is counted the
// same. It reads the partial index of reverted events, however many events exist.
func (m *Metrics) WatchReverts(store *memory.Store) {
	m.reg.MustRegister(&revertsCollector{store: store})
}

var revertedDesc = prometheus.NewDesc(Namespace+"_revisions_reverted_total",
	"Applied revisions an operator reverted, by the origin of the revision (extraction, consolidation, operator).",
	[]string{"origin"}, nil)

type revertsCollector struct {
	store *memory.Store
}

func (c *revertsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- revertedDesc }

func (c *revertsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.store.RevertedByOrigin(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(revertedDesc, err)
		return
	}
	// Every origin is reported, at 0 until a revision of it is reverted.
	for _, o := range []memory.RevisionOrigin{memory.RevisionExtraction, memory.RevisionConsolidation, memory.RevisionOperator} {
		ch <- prometheus.MustNewConstMetric(revertedDesc, prometheus.CounterValue, float64(counts[o]), string(o))
	}
}
