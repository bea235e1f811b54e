package eval

import (
	"bytes"
	_ "embed"
	"fmt"
)

// The held-out set: labeled scenarios written apart from the shipped set and from the
// engine's rules, so that the engine is measured on scenarios it was not shaped on
// (slots named differently, other languages, retractions, other people, text the
// user did not say as their own, several changes at once). It is reported on its own
// line; thresholds are chosen on the shipped set.

//go:embed heldout.jsonl
var heldOut []byte

//go:embed heldout_gold.jsonl
var heldOutLabels []byte

// HeldOutName is how errors and reports name the embedded held-out scenario set.
const HeldOutName = "eval/heldout.jsonl"

// HeldOutLabelsName is how errors name the held-out set's gold labels.
const HeldOutLabelsName = "eval/heldout_gold.jsonl"

// HeldOut is the held-out scenario set embedded in the binary and its gold labels,
// each loaded and checked as the shipped ones are, and checked against each other.
func HeldOut() ([]Scenario, []Labels, error) {
	scenarios, err := Load(HeldOutName, bytes.NewReader(heldOut))
	if err != nil {
		return nil, nil, err
	}
	labels, err := LoadLabels(HeldOutLabelsName, bytes.NewReader(heldOutLabels))
	if err != nil {
		return nil, nil, err
	}
	if err := CheckLabels(scenarios, labels); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", HeldOutLabelsName, err)
	}
	if len(labels) != len(scenarios) {
		return nil, nil, fmt.Errorf("%s: %d labeled scenarios for the %d of %s", HeldOutLabelsName, len(labels), len(scenarios), HeldOutName)
	}
	return scenarios, labels, nil
}
