package tracing

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// RiverMiddleware is the River client's middleware (river.Config.Middleware): River's
// own OpenTelemetry middleware spans each insert and each job attempt
// (river.work/credo.extract_scope), and writes the inserting span's W3C trace context in
// the job's metadata; ahead of it, the job's attempts are made children of that span, so
// an enqueue and the job it inserted are one trace (otelriver alone would start a trace
// per attempt, linked to the enqueue). Off, it is nil.
func (t *Tracing) RiverMiddleware() []rivertype.Middleware {
	if !t.Enabled() {
		return nil
	}
	return []rivertype.Middleware{
		&enqueuedBy{},
		otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
			TracerProvider:              t.provider,
			MeterProvider:               metricnoop.NewMeterProvider(), // metrics stay on Prometheus
			EnableTracePropagation:      true,
			EnableWorkSpanJobKindSuffix: true,
		}),
	}
}

// enqueuedBy makes a job's work the child of the span that inserted it, from the trace
// context otelriver wrote in the job's metadata.
type enqueuedBy struct{ river.MiddlewareDefaults }

func (*enqueuedBy) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var meta map[string]any
	if len(job.Metadata) == 0 || json.Unmarshal(job.Metadata, &meta) != nil {
		return doInner(ctx)
	}
	carrier := propagation.MapCarrier{}
	for _, key := range (propagation.TraceContext{}).Fields() {
		if v, ok := meta[key].(string); ok {
			carrier[key] = v
		}
	}
	if len(carrier) == 0 || trace.SpanContextFromContext(ctx).IsValid() {
		return doInner(ctx)
	}
	return doInner(propagation.TraceContext{}.Extract(ctx, carrier))
}
