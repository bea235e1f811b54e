package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// observe observes v, with the trace of ctx's span as its exemplar when that trace is
// sampled (its spans are exported): an operator goes from a slow bucket of the
// histogram to the trace of one call that fell in it. Exemplars are served in
// OpenMetrics only (Handler).
func observe(ctx context.Context, o prometheus.Observer, v float64) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		if eo, ok := o.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String()})
			return
		}
	}
	o.Observe(v)
}
