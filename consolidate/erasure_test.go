package consolidate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// A purge that commits while the model judges a cluster leaves nothing of the purged
// belief: the pass finds its member gone under the scope's lock and writes neither the
// judgment nor the verdict, whatever the model answered.
func TestRunScopeWritesNothingOfAMemberPurgedDuringTheCall(t *testing.T) {
	t.Parallel()
	for name, verdict := range map[string]func(req llmtest.Request) llmtest.Reply{
		"keep all":  func(llmtest.Request) llmtest.Reply { return answer() },
		"supersede": judge(miami, florida, "duplicate"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w, bundle := setup(t)
			ids := bundle.add(t, "user:1", memory.RevisionExtraction,
				fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"))
			var (
				mu       sync.Mutex
				purged   int
				purgeErr error
			)
			bundle.llm.Handle(func(req llmtest.Request) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if _, shown := candidates(req.Prompt)[florida]; shown && purged == 0 {
					_, purgeErr = bundle.store.Purge(ctx, memory.Selection{Scope: "user:1", IDs: []int64{ids[1]}})
					purged++
				}
				return verdict(req)
			})

			rep, err := w.RunScope(ctx, "user:1")
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			require.NoError(t, purgeErr)
			require.Equal(t, 1, purged, "the purge ran during the model's call")
			require.Zero(t, rep.Applied)
			var judgments int
			require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM consolidation_judgment").Scan(&judgments))
			require.Zero(t, judgments, "no judgment of a cluster whose member was purged")
			events, err := bundle.store.Events(ctx, "user:1", 0)
			require.NoError(t, err)
			require.Empty(t, events)
			require.Equal(t, memory.StatusActive, bundle.belief(t, ids[0]).Status)
		})
	}
}

// A cluster's signature names its members by id and by what of them can change, never
// by their text: no stored digest can be matched against a guessed statement.
func TestSignatureHoldsNoText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	a := []memory.Belief{{ID: 1, Statement: "User bank PIN is 5140", ValidFrom: at}, {ID: 2, Statement: "User banks at Chase", ValidFrom: at}}
	b := []memory.Belief{{ID: 2, Statement: "something else", ValidFrom: at}, {ID: 1, Statement: "User bank PIN is 0000", ValidFrom: at}}
	require.Equal(t, signature(a), signature(b), "the same members, whatever their text and order")

	moved := []memory.Belief{a[0], {ID: 2, Statement: a[1].Statement, ValidFrom: at.AddDate(0, 0, -1)}}
	require.NotEqual(t, signature(a), signature(moved), "a member shown with another start is another cluster")
	require.NotEqual(t, signature(a), signature([]memory.Belief{a[0], {ID: 3, Statement: a[1].Statement, ValidFrom: at}}))

	// The former signature: sha256 of "id:len:statement" lines.
	h := sha256.New()
	for _, m := range a {
		h.Write([]byte(strconv.FormatInt(m.ID, 10) + ":" + strconv.Itoa(len(m.Statement)) + ":" + m.Statement + "\n"))
	}
	require.NotEqual(t, hex.EncodeToString(h.Sum(nil)), signature(a))
}
