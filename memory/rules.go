package memory

import "fmt"

// The rules of the revision engine that need no database: see doc.go for the table
// they make up, and chain.go for where history is placed.

// entrenched says why a revision by a writer of origin by, stating a belief of origin
// and confidence, may not replace or retract t, or "" when it may. Operators may change
// anything. An imported belief (another memory system's, with no transcript to quote)
// ranks with an inference: nothing it replaces is entrenched against it but what the
// user stated or an operator asserted, and any writer may replace it.
func entrenched(by RevisionOrigin, t *target, origin Origin, confidence float64) string {
	if by == RevisionOperator {
		return ""
	}
	switch {
	case t.Origin == OriginAuthoritative:
		return fmt.Sprintf("belief %d is authoritative: only an operator changes it", t.ID)
	case t.Origin == OriginUserStated && origin == OriginInferred:
		return fmt.Sprintf("belief %d was stated by the user: an inference does not replace it", t.ID)
	case t.Origin == OriginUserStated && origin == OriginImported:
		return fmt.Sprintf("belief %d was stated by the user: an imported belief does not replace it", t.ID)
	case t.Origin == OriginUserStated && confidence < t.Confidence:
		return fmt.Sprintf("belief %d was stated by the user with confidence %.2f: a revision with %.2f does not replace it", t.ID, t.Confidence, confidence)
	}
	return ""
}

// happened says why a revision for reason, by a writer of origin by, may not supersede
// t, or "" when it may: an event happened, and a later event does not undo it (a trip to
// Rome does not replace the trip to Paris). A correction may (it was remembered wrong),
// and an operator may.
func happened(by RevisionOrigin, t *target, reason Reason) string {
	if t.Kind != KindEvent || reason != ReasonTemporal || by == RevisionOperator {
		return ""
	}
	return fmt.Sprintf("belief %d is an event: it happened, and a later event does not replace it", t.ID)
}
