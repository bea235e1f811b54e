package verify_test

import (
	"fmt"

	"github.com/credohq/credo/verify"
)

// A verdict per directive asked about; one the model left out has no opinion, and the
// engine holds its directive.
func ExampleParse() {
	ops, err := verify.Parse(`{"verdicts": [{"directive": 1, "why": "the user moved to Lisbon", "holds": true}]}`, 2)
	if err != nil {
		panic(err)
	}
	for i, o := range ops {
		if o == nil {
			fmt.Printf("D%d: no verdict\n", i)
			continue
		}
		fmt.Printf("D%d: holds %v (%s)\n", i, o.Holds, o.Why)
	}
	// Output:
	// D0: no verdict
	// D1: holds true (the user moved to Lisbon)
}
