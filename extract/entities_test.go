package extract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// The issue's cases through the pipeline: the model answers "My sister just moved to
// Austin" with a supersession of the user's Boston, and "my daughter is allergic to
// penicillin too" with one of the user's allergy. The user keeps both; the sister's and
// the daughter's facts are their own entities' beliefs; each directive waits as
// other_entity. The next prompt names whom each candidate is about and the sister's
// other name, and the sister's next move replaces her own home.
func TestFactsAboutOthersReplaceNothingOfTheUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const scope = "user:fam"
	p := pipelinetest.New(t, nil)
	p.LLM.OnPrompt("I live in Boston", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User lives in Boston", Attribute: "home_city", Quote: "I live in Boston"},
		pipelinetest.Fact{Statement: "User is allergic to penicillin", Attribute: "allergy", Quote: "I'm allergic to penicillin"})})
	p.Enqueue(t, pipelinetest.T(scope, "me", "2026-01-10T09:00:00Z", "I live in Boston and I'm allergic to penicillin."))
	p.Drain(t)

	p.LLM.OnPrompt("My sister Sarah just moved to Austin", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User's sister lives in Austin", Subject: "user's sister", SubjectAliases: []string{"Sarah"},
			SubjectKind: "person", Attribute: "home_city", Quote: "My sister Sarah just moved to Austin",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}},
		pipelinetest.Fact{Statement: "User's daughter is allergic to penicillin", Subject: "my daughter", Attribute: "allergy",
			Quote: "my daughter is allergic to penicillin too", Resolves: &pipelinetest.Resolves{Index: 1, Action: "supersede", Reason: "temporal"}})})
	p.Enqueue(t, pipelinetest.T(scope, "family", "2026-02-01T09:00:00Z",
		"My sister Sarah just moved to Austin! And my daughter is allergic to penicillin too."))
	p.Drain(t)

	current, err := p.Store.Current(ctx, scope)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"User lives in Boston", "User is allergic to penicillin",
		"User's sister lives in Austin", "User's daughter is allergic to penicillin"}, statements(current))
	items, err := p.Store.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Len(t, items, 2)
	for _, it := range items {
		require.Equal(t, memory.CauseOtherEntity, *it.Cause)
	}

	// The writer's candidates come in a stable order: the sister's is the fourth.
	const sisterIndex = 3
	p.LLM.OnPrompt("Sarah moved again, to Denver", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User's sister lives in Denver", Subject: "Sarah", Attribute: "home_city",
			Quote: "Sarah moved again, to Denver", Resolves: &pipelinetest.Resolves{Index: sisterIndex, Action: "supersede", Reason: "temporal"}})})
	p.Enqueue(t, pipelinetest.T(scope, "denver", "2026-04-01T09:00:00Z", "Sarah moved again, to Denver."))
	p.Drain(t)
	chats := p.LLM.Chats()
	prompt := chats[len(chats)-1].Prompt
	require.Contains(t, prompt, "User's sister lives in Austin (sister: home_city, since 2026-02-01)", "the candidate names whom it is about")
	require.Contains(t, prompt, "User lives in Boston (home_city, since", "the user's own lines are as before")
	require.Contains(t, prompt, "- sister (person): Sarah", "the sister's other name is listed")
	require.Equal(t, sisterIndex, candidateIndex(t, prompt, "User's sister lives in Austin"), "the scripted index is the sister's")

	view, err := p.Store.EntityByName(ctx, scope, "sister", true)
	require.NoError(t, err)
	require.Len(t, view.Slots, 1)
	require.Equal(t, []string{"User's sister lives in Austin", "User's sister lives in Denver"}, statements(view.Slots[0].History))
	require.Equal(t, []string{"User's sister lives in Denver"}, statements(view.Slots[0].Current))
	current, err = p.Store.Current(ctx, scope)
	require.NoError(t, err)
	require.Contains(t, statements(current), "User lives in Boston")
}
