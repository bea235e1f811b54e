package tracingtest

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP/HTTP collector in the test's process: what a process exports to
// it over the wire, with the OTEL_* variables of Env, is what the test sees.
type Receiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies [][]byte
	spans  []Span
}

// Span is a span as received.
type Span struct {
	Name                          string
	TraceID, SpanID, ParentSpanID string
	// Service is its resource's service.name.
	Service    string
	Attributes map[string]string
	// Links are the span ids the span links to.
	Links []string
}

// NewReceiver starts a receiver that stops when the test ends.
func NewReceiver(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.receive))
	tb.Cleanup(r.srv.Close)
	return r
}

// Env are the variables that make a process export its traces to the receiver.
func (r *Receiver) Env() map[string]string {
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": r.srv.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_SERVICE_NAME":           "credo-test",
	}
}

// Setenv sets the variables of Env in the process's environment, where the SDK reads
// them, until the test ends (so the test cannot be parallel), and returns them for the
// command's own getenv.
func (r *Receiver) Setenv(t *testing.T) map[string]string {
	t.Helper()
	env := r.Env()
	for k, v := range env {
		t.Setenv(k, v)
	}
	return env
}

func (r *Receiver) receive(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.URL.Path != "/v1/traces" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	for _, rs := range msg.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Attributes: attributes(s.GetAttributes()), Service: service}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, hex.EncodeToString(l.GetSpanId()))
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = value(kv.GetValue())
	}
	return out
}

// value is an attribute's value as text: ints in decimal, arrays joined by commas.
func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, value(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Received says whether any request's body holds b: what was sent, whatever field it
// went in.
func (r *Receiver) Received(b []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.bodies, func(body []byte) bool { return bytes.Contains(body, b) })
}
