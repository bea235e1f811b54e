package pipelinetest

import (
	"slices"
	"sync"

	"github.com/credohq/credo/extract"
)

// Reports is an extract.Observer that keeps every extraction report, in the order they
// arrived.
type Reports struct {
	mu   sync.Mutex
	list []extract.Report
}

// Extracted keeps r.
func (r *Reports) Extracted(rep extract.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rep)
}

// All is every report so far.
func (r *Reports) All() []extract.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// StaleRounds sums the extractions done again because another writer revised the scope.
func (r *Reports) StaleRounds() int {
	n := 0
	for _, rep := range r.All() {
		n += rep.StaleRounds
	}
	return n
}

// Errors lists the errors of the failed attempts.
func (r *Reports) Errors() []string {
	var out []string
	for _, rep := range r.All() {
		if rep.Err != nil {
			out = append(out, rep.Err.Error())
		}
	}
	return out
}
