package memory

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The rules that need no database, tested without one: go test -run 'Rule|Chain' ./memory
// runs these alone.

func TestRuleEntrenched(t *testing.T) {
	t.Parallel()
	stated := &target{ID: 1, Origin: OriginUserStated, Confidence: 0.8}
	authoritative := &target{ID: 2, Origin: OriginAuthoritative, Confidence: 1}
	inferred := &target{ID: 3, Origin: OriginInferred, Confidence: 0.9}
	imported := &target{ID: 4, Origin: OriginImported, Confidence: 1}
	for name, tc := range map[string]struct {
		by         RevisionOrigin
		t          *target
		origin     Origin
		confidence float64
		refused    string // a part of the reason; "" when the revision may go ahead
	}{
		"authoritative, by extraction":             {RevisionExtraction, authoritative, OriginUserStated, 1, "only an operator changes it"},
		"authoritative, by consolidation":          {RevisionConsolidation, authoritative, OriginInferred, 1, "only an operator changes it"},
		"authoritative, by an operator":            {RevisionOperator, authoritative, OriginInferred, 0, ""},
		"stated, replaced by an inference":         {RevisionExtraction, stated, OriginInferred, 0.99, "an inference does not replace it"},
		"stated, replaced with less confidence":    {RevisionExtraction, stated, OriginUserStated, 0.7, "with confidence 0.80: a revision with 0.70"},
		"stated, replaced with equal confidence":   {RevisionExtraction, stated, OriginUserStated, 0.8, ""},
		"stated, replaced with more confidence":    {RevisionConsolidation, stated, OriginUserStated, 0.9, ""},
		"stated, an operator's inference":          {RevisionOperator, stated, OriginInferred, 0, ""},
		"inferred, replaced by an inference":       {RevisionExtraction, inferred, OriginInferred, 0.1, ""},
		"inferred, replaced by a user's statement": {RevisionExtraction, inferred, OriginUserStated, 0.5, ""},
		"imported, replaced by an inference":       {RevisionExtraction, imported, OriginInferred, 0.5, ""},
		"imported, replaced by consolidation":      {RevisionConsolidation, imported, OriginImported, 0.5, ""},
		"stated, replaced by an imported belief":   {RevisionConsolidation, stated, OriginImported, 1, "an imported belief does not replace it"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			why := entrenched(tc.by, tc.t, tc.origin, tc.confidence)
			if tc.refused == "" {
				require.Empty(t, why)
				return
			}
			require.Contains(t, why, tc.refused)
		})
	}
}

func TestRuleHappened(t *testing.T) {
	t.Parallel()
	event := &target{ID: 1, Kind: KindEvent}
	attribute := &target{ID: 2, Kind: KindAttribute}
	for name, tc := range map[string]struct {
		by      RevisionOrigin
		t       *target
		reason  Reason
		refused bool
	}{
		"a later event":               {RevisionExtraction, event, ReasonTemporal, true},
		"a later event, consolidated": {RevisionConsolidation, event, ReasonTemporal, true},
		"an event remembered wrong":   {RevisionExtraction, event, ReasonCorrection, false},
		"an event's duplicate":        {RevisionConsolidation, event, ReasonDuplicate, false},
		"an operator's later event":   {RevisionOperator, event, ReasonTemporal, false},
		"an attribute that changed":   {RevisionExtraction, attribute, ReasonTemporal, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.refused, happened(tc.by, tc.t, tc.reason) != "")
		})
	}
}

// member is one belief of a chain: valid from, until ("" while it holds), linked to by.
func member(id int64, statement string, status Status, from, until string, by int64) *target {
	m := &target{ID: id, Statement: statement, Status: status, ValidFrom: day(from)}
	if until != "" {
		m.ValidUntil = new(day(until))
	}
	if by != 0 {
		m.SupersededBy = &by
	}
	return m
}

func TestRuleHeld(t *testing.T) {
	t.Parallel()
	require.True(t, member(1, "a", StatusActive, "2026-01-01", "", 0).held())
	require.True(t, member(1, "a", StatusSuperseded, "2026-01-01", "2026-02-01", 2).held())
	require.False(t, member(1, "a", StatusRetracted, "2026-01-01", "2026-01-01", 0).held(), "retracted as never true")
	require.False(t, member(1, "a", StatusSuperseded, "2026-01-01", "2026-01-01", 2).held(), "replaced the day it began")
	require.False(t, member(1, "a", StatusForgotten, "2026-01-01", "2026-02-01", 2).held(), "forgotten")
}

func TestChainPlace(t *testing.T) {
	t.Parallel()
	// Paris (January) → Rome (March) → Oslo (May), the head.
	paris := member(1, "Paris", StatusSuperseded, "2026-01-01", "2026-03-01", 2)
	rome := member(2, "Rome", StatusSuperseded, "2026-03-01", "2026-05-01", 3)
	oslo := member(3, "Oslo", StatusActive, "2026-05-01", "", 0)
	// Paris → Lima (forgotten) → Rome.
	parisToLima := member(1, "Paris", StatusSuperseded, "2026-01-01", "2026-03-01", 4)
	lima := member(4, "Lima", StatusForgotten, "2026-02-01", "2026-03-01", 2)
	// Paris → Bern, which never held (replaced the day it began) → Rome.
	parisToBern := member(1, "Paris", StatusSuperseded, "2026-01-01", "2026-02-01", 5)
	bern := member(5, "Bern", StatusSuperseded, "2026-02-01", "2026-02-01", 2)
	for name, tc := range map[string]struct {
		members          []*target
		at               string
		prev, next, succ int64 // 0: none
		fails            bool
	}{
		"between two":                     {[]*target{paris, rome, oslo}, "2026-02-01", 1, 2, 2, false},
		"between the last two":            {[]*target{paris, rome, oslo}, "2026-04-01", 2, 3, 3, false},
		"before the first":                {[]*target{paris, rome, oslo}, "2025-12-01", 0, 1, 1, false},
		"the day the first began":         {[]*target{paris, rome, oslo}, "2026-01-01", 1, 2, 2, false},
		"after the head began":            {[]*target{paris, rome, oslo}, "2026-06-01", 0, 0, 0, true},
		"past a forgotten member":         {[]*target{parisToLima, lima, rome, oslo}, "2026-02-15", 1, 2, 2, false},
		"the day a forgotten one began":   {[]*target{parisToLima, lima, rome, oslo}, "2026-02-01", 1, 2, 2, false},
		"beside a member that never held": {[]*target{parisToBern, bern, rome, oslo}, "2026-01-15", 1, 2, 5, false},
		"after a member that never held":  {[]*target{parisToBern, bern, rome, oslo}, "2026-02-15", 0, 2, 2, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			at, err := newChain(tc.members).place(day(tc.at))
			if tc.fails {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			id := func(m *target) int64 {
				if m == nil {
					return 0
				}
				return m.ID
			}
			require.Equal(t, [3]int64{tc.prev, tc.next, tc.succ}, [3]int64{id(at.prev), id(at.next), id(at.succ)}, "prev, next, succ")
		})
	}
}

func TestChainEarlier(t *testing.T) {
	t.Parallel()
	// Paris (February) → Rome (March), the belief restated.
	paris := member(1, "User lives in Paris", StatusSuperseded, "2026-02-01", "2026-03-01", 2)
	rome := member(2, "User lives in Rome", StatusActive, "2026-03-01", "", 0)
	c := newChain([]*target{paris, rome})
	for name, tc := range map[string]struct {
		statement string
		at        string
		want      earlierStatement
		next      int64
	}{
		"after what it replaced began":       {"User lives in Rome", "2026-02-15", startMoves, 0},
		"the day what it replaced began":     {"User lives in Rome", "2026-02-01", startKept, 2},
		"before what it replaced: came back": {"User lives in Rome.", "2026-01-01", cameBack, 1},
		"before, of what it replaced":        {"user lives in paris", "2026-01-01", restatesEarlier, 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			how, at, err := c.earlier(rome, tc.statement, day(tc.at))
			require.NoError(t, err)
			require.Equal(t, tc.want, how)
			if tc.next != 0 {
				require.Equal(t, tc.next, at.next.ID)
			}
		})
	}
}

func TestChainInto(t *testing.T) {
	t.Parallel()
	// Paris → Bern (never held) → Rome, and Lima (forgotten) → Rome.
	paris := member(1, "Paris", StatusSuperseded, "2026-01-01", "2026-02-01", 5)
	bern := member(5, "Bern", StatusSuperseded, "2026-02-01", "2026-02-01", 2)
	lima := member(4, "Lima", StatusForgotten, "2026-01-15", "2026-03-01", 2)
	rome := member(2, "Rome", StatusActive, "2026-03-01", "", 0)
	c := newChain([]*target{paris, lima, bern, rome})
	require.ElementsMatch(t, []int64{1, 4, 5}, c.into(2), "directly, and past a member that never held")
	require.Equal(t, []int64{1}, c.into(5))
}

func TestRuleNormStatement(t *testing.T) {
	t.Parallel()
	require.Equal(t, "user lives in rome", normStatement("  User  lives in\tRome. "))
	require.Equal(t, normStatement("User lives in Rome"), normStatement("user lives in rome."))
	require.NotEqual(t, normStatement("User lives in Rome"), normStatement("User lives in Romeo"))
}
