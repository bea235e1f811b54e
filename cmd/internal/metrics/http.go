package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// CountResponses counts the answers of next by status code
// (credo_http_responses_total{code}): the share of 4xx and 5xx an operator alerts on.
func (m *Metrics) CountResponses(next http.Handler) http.Handler {
	responses := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "http_responses_total",
		Help: "HTTP answers of the API, MCP, the inspector, /healthz and /metrics, by status code."}, []string{"code"})
	m.reg.MustRegister(responses)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		responses.WithLabelValues(strconv.Itoa(rec.code)).Inc()
	})
}

// statusRecorder remembers the status an answer was written with.
type statusRecorder struct {
	http.ResponseWriter
	code    int
	written bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.written {
		r.code, r.written = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.written = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer's flush and deadlines.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
