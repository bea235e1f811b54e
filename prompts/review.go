package prompts

import (
	"bytes"
	"fmt"
	"time"
)

// ReviewBasis is a changed belief that a reviewed belief was concluded from.
type ReviewBasis struct {
	// Statement is the basis as it was; "" when it was erased or forgotten, whose text
	// is never shown.
	Statement string
	// Status is superseded, retracted, forgotten or erased, or active when an
	// operator's revert restored it.
	Status string
	// Now is the statement that replaced the basis, "" if none.
	Now string
}

// ReviewItem is a belief flagged for review; its index in Review.Items is the index
// the model answers with.
type ReviewItem struct {
	Statement string
	Attribute string
	ValidFrom time.Time
	// Bases are the changed bases of the belief, at least one.
	Bases []ReviewBasis
}

// Since is the belief's valid_from as a date, for the template.
func (r ReviewItem) Since() string { return r.ValidFrom.UTC().Format(time.DateOnly) }

// Review is what the review prompt shows: flagged beliefs of one scope.
type Review struct {
	Scope string
	Items []ReviewItem
}

// Review renders the system and user messages of one review call. Every value is
// rendered on one line and basis lines are indented, so that only items begin a line
// with "[N] ".
func (p *Prompts) Review(r Review) (system, user string, err error) {
	items := make([]ReviewItem, len(r.Items))
	for i, x := range r.Items {
		bases := make([]ReviewBasis, len(x.Bases))
		for j, b := range x.Bases {
			bases[j] = ReviewBasis{Statement: oneLine(b.Statement), Status: oneLine(b.Status), Now: oneLine(b.Now)}
			// Erasing or forgetting a belief promises its text reaches no model again,
			// even if a caller passes it by mistake.
			if bases[j].Status == "erased" || bases[j].Status == "forgotten" {
				bases[j].Statement = ""
			}
		}
		items[i] = ReviewItem{Statement: oneLine(x.Statement), Attribute: oneLine(x.Attribute), ValidFrom: x.ValidFrom, Bases: bases}
	}
	var buf bytes.Buffer
	if err := p.reviewUser.Execute(&buf, Review{Scope: oneLine(r.Scope), Items: items}); err != nil {
		return "", "", fmt.Errorf("prompts: render review: %w", err)
	}
	return p.reviewSystem, buf.String(), nil
}
