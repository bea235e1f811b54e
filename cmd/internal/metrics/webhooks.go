package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/credohq/credo/webhook"
)

func (m *Metrics) registerWebhooks() {
	m.webhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "webhook_deliveries_total",
		Help: "Webhook delivery attempts by this process, by outcome (delivered, retrying, failed: given up after a day, refused: an internal address, dropped: erased or its webhook gone).",
	}, []string{"outcome"})
	m.webhookLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "webhook_delivery_duration_seconds",
		Help:    "Time from sending a webhook delivery to its answer, whatever the answer.",
		Buckets: latencyBuckets,
	})
	m.reg.MustRegister(m.webhookDeliveries, m.webhookLatency)
}

// WebhookDelivery records one delivery attempt; with it *Metrics is a webhook.Observer.
func (m *Metrics) WebhookDelivery(outcome string, latency time.Duration) {
	m.webhookDeliveries.WithLabelValues(outcome).Inc()
	if latency > 0 {
		m.webhookLatency.Observe(latency.Seconds())
	}
}

// WatchWebhooks registers credo_webhook_backlog, the deliveries waiting, and
// credo_webhook_oldest_undelivered_seconds, read at each scrape.
func (m *Metrics) WatchWebhooks(hooks *webhook.Webhooks) {
	m.reg.MustRegister(&webhookCollector{hooks: hooks})
}

var (
	webhookBacklogDesc = prometheus.NewDesc(Namespace+"_webhook_backlog",
		"Webhook deliveries waiting to be sent (retries included), over every webhook.", nil, nil)
	webhookOldestDesc = prometheus.NewDesc(Namespace+"_webhook_oldest_undelivered_seconds",
		"Age of the oldest change a webhook has not received yet; 0 when none waits.", nil, nil)
)

type webhookCollector struct {
	hooks *webhook.Webhooks
}

func (c *webhookCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- webhookBacklogDesc
	ch <- webhookOldestDesc
}

func (c *webhookCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, oldest, err := c.hooks.Backlog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(webhookBacklogDesc, err)
		return
	}
	age := 0.0
	if oldest != nil {
		age = time.Since(*oldest).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(webhookBacklogDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(webhookOldestDesc, prometheus.GaugeValue, age)
}
