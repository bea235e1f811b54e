package memory_test

import (
	"context"
	"fmt"
	"time"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// An agent asks memory about the present and about the past. The caller embeds
// statements and questions with its own model; a two-dimensional toy space stands in
// for it here.
func ExampleStore_Recall() {
	ctx := context.Background()
	schema, drop, err := dbtest.Create(ctx)
	if err != nil {
		panic(err)
	}
	defer drop()
	store := memory.NewStore(schema.Pool, nil)

	date := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	moved := date("2026-02-20")
	first, err := store.Apply(ctx, &memory.Batch{Scope: "user:42", Origin: memory.RevisionExtraction, At: date("2026-01-15"),
		EmbedModel: "toy", Facts: []memory.Fact{
			{Statement: "User lives in New York City", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated, Embedding: []float32{1, 0.1}},
			{Statement: "User likes espresso", Attribute: "coffee", Confidence: 0.9, Origin: memory.OriginUserStated, Embedding: []float32{0, 1}},
		}})
	if err != nil {
		panic(err)
	}
	// The next conversation says the user moved: Miami supersedes New York.
	_, err = store.Apply(ctx, &memory.Batch{Scope: "user:42", Origin: memory.RevisionExtraction, At: date("2026-03-20"),
		Candidates: []int64{first.Facts[0].BeliefID}, EmbedModel: "toy", Facts: []memory.Fact{
			{Statement: "User lives in Miami", Attribute: "location", ValidFrom: &moved, Confidence: 0.9, Origin: memory.OriginUserStated,
				Quote: "I moved to Miami last month", Embedding: []float32{1, 0},
				Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}},
		}})
	if err != nil {
		panic(err)
	}

	show := func(title string, q memory.RecallQuery) {
		rec, err := store.Recall(ctx, q)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s (%s)\n", title, rec.Mode)
		for _, b := range rec.Beliefs {
			until := "now"
			if b.ValidUntil != nil {
				until = b.ValidUntil.Format(time.DateOnly)
			}
			fmt.Printf("  %s [%s, %s .. %s]\n", b.Statement, b.Status, b.ValidFrom.Format(time.DateOnly), until)
		}
	}
	whereVector := []float32{1, 0} // the embedding of a question about where the user lives
	for _, question := range []string{"Where does the user live?", "Where did the user live before the move?"} {
		show(question, memory.RecallQuery{Scope: "user:42", Text: question, Vector: whereVector, EmbedModel: "toy", K: 1})
	}
	asOf := date("2026-02-01")
	show("Everything true on 2026-02-01", memory.RecallQuery{Scope: "user:42", AsOf: &asOf})

	// Output:
	// Where does the user live? (current)
	//   User lives in Miami [active, 2026-02-20 .. now]
	// Where did the user live before the move? (history)
	//   User lives in New York City [superseded, 2026-01-15 .. 2026-02-20]
	//   User lives in Miami [active, 2026-02-20 .. now]
	// Everything true on 2026-02-01 (as_of)
	//   User likes espresso [active, 2026-01-15 .. now]
	//   User lives in New York City [superseded, 2026-01-15 .. 2026-02-20]
}

func ExampleIsHistorical() {
	fmt.Println(memory.IsHistorical("What is the user's current address?"))
	fmt.Println(memory.IsHistorical("Where did the user live before the move?"))
	fmt.Println(memory.IsHistorical("Does the user still work at Acme?"))
	// Output:
	// false
	// true
	// true
}
