package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/credohq/credo/memory"
)

// WatchBacklog registers gauges of the extraction backlog, read from the database at
// each scrape (from the pending and failed episodes' indexes, so a scrape stays cheap
// however long the history): pending and failed episodes, scopes with pending
// episodes, and how long the oldest pending episode has waited.
func (m *Metrics) WatchBacklog(store *memory.Store) {
	m.reg.MustRegister(&backlogCollector{store: store, now: time.Now})
}

var (
	pendingDesc = prometheus.NewDesc(Namespace+"_episodes_pending",
		"Episodes waiting for extraction.", nil, nil)
	failedDesc = prometheus.NewDesc(Namespace+"_episodes_failed",
		"Episodes whose extraction failed for good (beliefs scopes lists them by scope).", nil, nil)
	pendingScopesDesc = prometheus.NewDesc(Namespace+"_scopes_pending",
		"Scopes with episodes waiting for extraction.", nil, nil)
	oldestDesc = prometheus.NewDesc(Namespace+"_episodes_oldest_pending_age_seconds",
		"How long the oldest pending episode has waited since it was enqueued (0: none is pending).", nil, nil)
)

type backlogCollector struct {
	store *memory.Store
	now   func() time.Time
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingDesc, failedDesc, pendingScopesDesc, oldestDesc} {
		ch <- d
	}
}

// Collect reads the backlog; if the database does not answer in time, the scrape
// reports the error for these gauges and the rest as usual.
func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b, err := c.store.Backlog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(pendingDesc, err)
		return
	}
	age := 0.0
	if !b.OldestPendingAt.IsZero() {
		age = max(0, c.now().Sub(b.OldestPendingAt).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(b.Pending))
	ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(b.Failed))
	ch <- prometheus.MustNewConstMetric(pendingScopesDesc, prometheus.GaugeValue, float64(b.Scopes))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
}

// WatchReembed registers a gauge of the beliefs and revision events embedded with
// another model than model, read at each scrape from the (embed_model, scope) indexes:
// what the background re-embedding has left after EMBED_MODEL changed.
func (m *Metrics) WatchReembed(store *memory.Store, model string) {
	m.reg.MustRegister(&reembedCollector{store: store, model: model})
}

var reembedDesc = prometheus.NewDesc(Namespace+"_reembed_pending",
	"Beliefs and revision events embedded with another model than EMBED_MODEL, left to re-embed.", nil, nil)

type reembedCollector struct {
	store *memory.Store
	model string
}

func (c *reembedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- reembedDesc }

func (c *reembedCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	left, err := c.store.ReembedPending(ctx, c.model, "")
	if err != nil {
		ch <- prometheus.NewInvalidMetric(reembedDesc, err)
		return
	}
	n := 0
	for _, v := range left {
		n += v
	}
	ch <- prometheus.MustNewConstMetric(reembedDesc, prometheus.GaugeValue, float64(n))
}
