package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// locomo is the path of LoCoMo's locomo10.json, whose conversations the false-positive
// test scans too when it is given:
//
//	go test ./redact -run TestNoFalsePositives -v -locomo /path/to/locomo10.json
var locomo = flag.String("locomo", "", "also scan this LoCoMo file (locomo10.json) for false positives")

// The detectors redact nothing of the conversations credo ships (the examples, the
// evaluation's scenarios and its test data) or of LoCoMo's when given: ordinary talk,
// with its dates, phone numbers, amounts and order numbers, loses nothing. Every string
// of each file is scanned, its ids and answers too; the counts are logged.
func TestNoFalsePositives(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.jsonl")
	require.NoError(t, err)
	more, err := filepath.Glob("../eval/testdata/*")
	require.NoError(t, err)
	files = append(append(files, "../eval/scenarios.jsonl"), more...)
	require.GreaterOrEqual(t, len(files), 10)
	if *locomo != "" {
		files = append(files, *locomo)
	}
	r := all(t)
	total := 0
	for _, f := range files {
		strs, redacted := scanFile(t, r, f)
		t.Logf("%s: %d strings, %d redacted", f, strs, redacted.Total())
		require.Positive(t, strs, f)
		require.Empty(t, redacted, "%s: ordinary talk redacted", f)
		total += strs
	}
	t.Logf("%d files, %d strings, 0 redacted", len(files), total)
}

// scanFile redacts every string of the JSON values of file (one value, or JSON lines)
// and returns how many strings it read and what it would redact.
func scanFile(t *testing.T, r *Redactor, file string) (int, Counts) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	n, counts := 0, Counts{}
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n, counts
		}
		require.NoError(t, err, file)
		walkStrings(v, func(s string) {
			n++
			if got, c := r.Text(s); c != nil {
				t.Logf("%s: %q became %q", file, s, got)
				counts.Add(c)
			}
		})
	}
}

// walkStrings calls f with every string of v, object keys included.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	}
}

// BenchmarkTextShipped redacts every string of the conversations credo ships (examples,
// the evaluation's scenarios and test data): ordinary talk, as the detectors meet it,
// where the keywords of gitleaks' rules ("s.", "ey", "sk", "key") occur as they do in
// prose. ns/op is per pass over all of them; strings/op says how many.
func BenchmarkTextShipped(b *testing.B) {
	files, err := filepath.Glob("../examples/*.jsonl")
	require.NoError(b, err)
	more, err := filepath.Glob("../eval/testdata/*")
	require.NoError(b, err)
	files = append(append(files, "../eval/scenarios.jsonl"), more...)
	var strs []string
	size := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(b, err)
		dec := json.NewDecoder(bytes.NewReader(raw))
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err, f)
			walkStrings(v, func(s string) { strs = append(strs, s); size += len(s) })
		}
	}
	r, err := New(All())
	require.NoError(b, err)
	b.SetBytes(int64(size))
	// The machine is shared: the process's CPU time per op is steadier than the wall
	// clock's.
	var ru syscall.Rusage
	cpu := func() int64 {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	defer func() {
		b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(len(strs)), "strings/op")
	}()
	for b.Loop() {
		for _, s := range strs {
			r.Text(s)
		}
	}
}
