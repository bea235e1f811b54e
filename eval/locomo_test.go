package eval_test

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/transcript"
)

const locomoMini = "testdata/locomo-mini.json"

func parseMini(t *testing.T) []eval.LocomoSample {
	t.Helper()
	f, err := os.Open(locomoMini)
	require.NoError(t, err)
	defer f.Close()
	samples, err := eval.ParseLocomo(locomoMini, f)
	require.NoError(t, err)
	return samples
}

func TestParseLocomoMini(t *testing.T) {
	t.Parallel()
	samples := parseMini(t)
	require.Len(t, samples, 2)

	a := samples[0]
	require.Equal(t, "mini-a", a.ID)
	require.Equal(t, "locomo:mini-a", a.Scope())
	require.Equal(t, []string{"Ana", "Ben"}, a.Speakers)
	require.Len(t, a.Sessions, 3, "session_4_date_time has no session: ignored")
	want := []time.Time{
		time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC),
		time.Date(2023, 6, 13, 0, 9, 0, 0, time.UTC), // 12:09 am
		time.Date(2023, 6, 27, 10, 37, 0, 0, time.UTC),
	}
	for i, s := range a.Sessions {
		require.Equal(t, want[i], s.At, s.ID)
		require.Equal(t, "session_"+string(rune('1'+i)), s.ID)
	}
	require.Equal(t, "1:56 pm on 8 May, 2023", a.Sessions[0].DateTime)
	require.Equal(t, "Look at what I made! [shares a photo: a photo of a blue ceramic bowl]", a.Sessions[1].Turns[0].Content())
	require.Equal(t, "D2:1", a.Sessions[1].Turns[0].DiaID)

	require.Len(t, a.Questions, 4, "category 5 is left out")
	require.Equal(t, 1, a.Adversarial)
	require.Equal(t, eval.LocomoQuestion{Index: 1, Question: "When did Ben paint a sunrise?", Answer: "2022", Category: eval.LocomoTemporal,
		Evidence: []string{"D1:2"}},
		a.Questions[1], "a numeric answer is read as text")
	cats := []int{}
	for _, q := range a.Questions {
		cats = append(cats, q.Category)
	}
	require.Equal(t, []int{2, 2, 1, 4}, cats)

	b := samples[1]
	require.Len(t, b.Sessions, 2)
	require.Len(t, b.Questions, 3)
	require.Equal(t, 1, b.Adversarial, "a category 5 question with an answer is left out too")
	require.Equal(t, eval.LocomoOpenDomain, b.Questions[0].Category)

	tr := a.Sessions[1].Transcript(a.Scope())
	require.NoError(t, tr.Validate(time.Now(), transcript.Limits{}))
	require.Equal(t, "locomo:mini-a", tr.Scope)
	require.Equal(t, "session_2", tr.ID)
	require.Equal(t, want[1], *tr.OccurredAt)
	require.Equal(t, []transcript.Message{
		{Role: "user", Name: "Ana", Content: "Look at what I made! [shares a photo: a photo of a blue ceramic bowl]"},
		{Role: "user", Name: "Ben", Content: "Lovely. I adopted a dog named Rex."},
	}, tr.Messages)
}

func TestLocomoCategoryNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []int{1, 2, 3, 4}, eval.LocomoCategories)
	names := []string{}
	for _, c := range append(eval.LocomoCategories, 5, 6) {
		names = append(names, eval.LocomoCategoryName(c))
	}
	require.Equal(t, []string{"multi-hop", "temporal", "open-domain", "single-hop", "adversarial", "category 6"}, names)
}

func TestParseLocomoTime(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Time{
		"1:56 pm on 8 May, 2023":         time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC),
		"12:09 am on 13 September, 2023": time.Date(2023, 9, 13, 0, 9, 0, 0, time.UTC),
		"12:30 pm on 1 January, 2024":    time.Date(2024, 1, 1, 12, 30, 0, 0, time.UTC),
		"10:37 AM on  27 June, 2023":     time.Date(2023, 6, 27, 10, 37, 0, 0, time.UTC),
		"7:55 pm on 9 june 2023":         time.Date(2023, 6, 9, 19, 55, 0, 0, time.UTC),
		"8 May, 2023":                    time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC),
		"2023-05-08T13:56:00+02:00":      time.Date(2023, 5, 8, 11, 56, 0, 0, time.UTC),
		"2023-05-08":                     time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC),
	} {
		got, err := eval.ParseLocomoTime(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "yesterday", "13:56 pm on 8 May, 2023", "1:56 pm on 31 February, 2023"} {
		_, err := eval.ParseLocomoTime(in)
		require.Error(t, err, in)
	}
}

// sample is one LoCoMo sample as JSON, with its fields replaced or removed (nil).
func sample(over map[string]string) string {
	fields := map[string]string{
		"sample_id": `"conv-1"`,
		"conversation": `{"speaker_a": "Ana", "speaker_b": "Ben",
			"session_1_date_time": "1:56 pm on 8 May, 2023",
			"session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I went to a pottery class."}]}`,
		"qa": `[{"question": "What class did Ana take?", "answer": "Pottery", "category": 4}]`,
	}
	maps.Copy(fields, over)
	var parts []string
	for _, k := range []string{"sample_id", "conversation", "qa"} {
		if v := fields[k]; v != "" {
			parts = append(parts, `"`+k+`": `+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func conversation(sessions string) string {
	return `{"speaker_a": "Ana", "speaker_b": "Ben", ` + sessions + `}`
}

func TestParseLocomoShapes(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		data  string
		check func(t *testing.T, s eval.LocomoSample)
	}{
		"numeric sample_id": {"[" + sample(map[string]string{"sample_id": "26"}) + "]", func(t *testing.T, s eval.LocomoSample) {
			require.Equal(t, "26", s.ID)
		}},
		"one sample, not in an array": {sample(nil), func(t *testing.T, s eval.LocomoSample) {
			require.Equal(t, "conv-1", s.ID)
		}},
		"category as a string, answers as numbers, lists and booleans": {"[" + sample(map[string]string{"qa": `[
			{"question": "Q1", "answer": 3.5, "category": "4"},
			{"question": "Q2", "answer": ["pottery", 2, "painting"], "category": 1},
			{"question": "Q3", "answer": true, "category": 3},
			{"question": "Q4", "category": 5}]`}) + "]", func(t *testing.T, s eval.LocomoSample) {
			require.Equal(t, []eval.LocomoQuestion{
				{Index: 0, Question: "Q1", Answer: "3.5", Category: 4},
				{Index: 1, Question: "Q2", Answer: "pottery, 2, painting", Category: 1},
				{Index: 2, Question: "Q3", Answer: "true", Category: 3},
			}, s.Questions)
			require.Equal(t, 1, s.Adversarial)
		}},
		"sessions in number order, empty ones and empty turns left out, a caption alone": {"[" + sample(map[string]string{
			"conversation": conversation(`
			"session_10_date_time": "1:00 pm on 10 June, 2023", "session_10": [{"speaker": "Ben", "text": "Ten."}],
			"session_2_date_time": "1:00 pm on 2 June, 2023", "session_2": [{"speaker": "Ana", "text": "Two."}, {"speaker": "Ben", "text": "  "}],
			"session_3": [],
			"session_4": null,
			"session_5_date_time": "1:00 pm on 5 June, 2023", "session_5": [{"speaker": "Ana", "blip_caption": "a photo of a cat", "text": null}]`),
			"qa": "",
		}) + "]", func(t *testing.T, s eval.LocomoSample) {
			ids := []string{}
			for _, ses := range s.Sessions {
				ids = append(ids, ses.ID)
			}
			require.Equal(t, []string{"session_2", "session_5", "session_10"}, ids)
			require.Len(t, s.Sessions[0].Turns, 1)
			require.Equal(t, "[shares a photo: a photo of a cat]", s.Sessions[1].Turns[0].Content())
			require.Empty(t, s.Questions)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			samples, err := eval.ParseLocomo("x.json", strings.NewReader(tc.data))
			require.NoError(t, err)
			require.Len(t, samples, 1)
			tc.check(t, samples[0])
		})
	}
}

func TestParseLocomoErrors(t *testing.T) {
	t.Parallel()
	one := func(over map[string]string) string { return "[" + sample(over) + "]" }
	for name, tc := range map[string]struct{ data, want string }{
		"empty file":     {"", "x.json: empty; a LoCoMo file is a JSON array of samples"},
		"not JSON":       {"[{", "x.json: invalid JSON: line 1: unexpected end of JSON input"},
		"not a list":     {`"locomo"`, "x.json: not a LoCoMo file: it must be a JSON array of samples"},
		"no samples":     {"[]", "x.json: no samples"},
		"not an object":  {`[3]`, "x.json: sample 1: is a number, not a sample object"},
		"no sample_id":   {one(map[string]string{"sample_id": ""}), "x.json: sample 1: sample_id: missing"},
		"sample_id list": {one(map[string]string{"sample_id": "[1]"}), "x.json: sample 1: sample_id: is an array, not a string or a number"},
		"duplicate sample_id": {"[" + sample(nil) + "," + sample(nil) + "]",
			`x.json: sample 2 (conv-1): sample_id: "conv-1" is also the id of sample 1`},
		"no conversation": {one(map[string]string{"conversation": ""}), "x.json: sample 1 (conv-1): conversation: missing"},
		"conversation list": {one(map[string]string{"conversation": "[]"}),
			"x.json: sample 1 (conv-1): conversation: is an array, not an object"},
		"no sessions": {one(map[string]string{"conversation": conversation(`"session_1_date_time": "1:56 pm on 8 May, 2023"`)}),
			"x.json: sample 1 (conv-1): conversation: no sessions"},
		"session not a list": {one(map[string]string{"conversation": conversation(`"session_1": "hello", "session_1_date_time": "1:56 pm on 8 May, 2023"`)}),
			"x.json: sample 1 (conv-1): conversation.session_1: is a string, not a list of turns"},
		"turn without speaker": {one(map[string]string{"conversation": conversation(`"session_1": [{"text": "hi"}], "session_1_date_time": "1:56 pm on 8 May, 2023"`)}),
			"x.json: sample 1 (conv-1): conversation.session_1[0].speaker: missing"},
		"text a number": {one(map[string]string{"conversation": conversation(`"session_1": [{"speaker": "Ana", "text": 5}], "session_1_date_time": "1:56 pm on 8 May, 2023"`)}),
			"x.json: sample 1 (conv-1): conversation.session_1[0].text: is a number, not a string"},
		"session without date": {one(map[string]string{"conversation": conversation(`"session_1": [{"speaker": "Ana", "text": "hi"}]`)}),
			"x.json: sample 1 (conv-1): conversation.session_1_date_time: missing; every session needs its date"},
		"bad date": {one(map[string]string{"conversation": conversation(`"session_1": [{"speaker": "Ana", "text": "hi"}], "session_1_date_time": "a sunny day"`)}),
			`x.json: sample 1 (conv-1): conversation.session_1_date_time: "a sunny day" is not a date like "1:56 pm on 8 May, 2023"`},
		"date in the future": {one(map[string]string{"conversation": conversation(`"session_1": [{"speaker": "Ana", "text": "hi"}], "session_1_date_time": "1:56 pm on 8 May, 2999"`)}),
			"x.json: sample 1 (conv-1): conversation.session_1: not a valid transcript: occurred_at: 2999-05-08T13:56:00Z is in the future"},
		"qa not a list": {one(map[string]string{"qa": `{}`}), "x.json: sample 1 (conv-1): qa: is an object, not a list of questions"},
		"no category":   {one(map[string]string{"qa": `[{"question": "Q", "answer": "A"}]`}), "x.json: sample 1 (conv-1): qa[0].category: missing"},
		"category 9": {one(map[string]string{"qa": `[{"question": "Q", "answer": "A", "category": 9}]`}),
			"x.json: sample 1 (conv-1): qa[0].category: 9 is not a category from 1 to 5"},
		"category words": {one(map[string]string{"qa": `[{"question": "Q", "answer": "A", "category": "temporal"}]`}),
			"x.json: sample 1 (conv-1): qa[0].category: temporal is not a category from 1 to 5"},
		"no question": {one(map[string]string{"qa": `[{"answer": "A", "category": 2}]`}), "x.json: sample 1 (conv-1): qa[0].question: missing"},
		"no answer": {one(map[string]string{"qa": `[{"question": "Q", "category": 2, "adversarial_answer": "A"}]`}),
			"x.json: sample 1 (conv-1): qa[0].answer: missing; a question of category 2 needs its gold answer"},
		"answer an object": {one(map[string]string{"qa": `[{"question": "Q", "answer": {"a": 1}, "category": 2}]`}),
			"x.json: sample 1 (conv-1): qa[0].answer: is an object, not a string or a number"},
		"answer empty": {one(map[string]string{"qa": `[{"question": "Q", "answer": " ", "category": 2}]`}),
			"x.json: sample 1 (conv-1): qa[0].answer: is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := eval.ParseLocomo("x.json", strings.NewReader(tc.data))
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q\nwant %q", err, tc.want)
			var le *eval.LocomoError
			require.ErrorAs(t, err, &le)
		})
	}
}

func TestJudgeGrade(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	chat, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	j, err := eval.NewJudge(chat)
	require.NoError(t, err)
	ctx := context.Background()

	srv.Script(llmtest.Reply{Content: `{"reasoning": "same date", "verdict": "correct"}`, PromptTokens: 20, CompletionTokens: 4})
	got, err := j.Grade(ctx, "When did Ana go to the pottery class?", "7 May 2023", "On May 7th, 2023.")
	require.NoError(t, err)
	require.True(t, got.Correct())
	require.Equal(t, "same date", got.Reasoning)
	require.NoError(t, got.Err)
	require.Equal(t, 1, got.ChatCalls)
	require.Equal(t, 20, got.PromptTokens)
	req := srv.Chats()[0]
	require.Equal(t, prompts.JudgeSchemaName, req.SchemaName)
	require.Contains(t, req.Prompt, "Gold answer: 7 May 2023\nGenerated answer: On May 7th, 2023.")

	srv.Reset()
	srv.Script(llmtest.Reply{Content: `{"reasoning": "", "verdict": "maybe"}`}, llmtest.Reply{Content: `{"reasoning": "other thing", "verdict": "WRONG"}`})
	got, err = j.Grade(ctx, "Q", "Rex", "Max")
	require.NoError(t, err)
	require.False(t, got.Correct())
	require.NoError(t, got.Err, "fixed when asked again")
	require.Equal(t, 2, got.ChatCalls)
	require.Contains(t, srv.Chats()[1].Prompt, "That answer was rejected")

	srv.Reset()
	bad := llmtest.Reply{Content: `{"reasoning": "", "verdict": "CORRECT", "score": 1}`}
	srv.Script(bad, bad, bad, llmtest.Reply{Content: `{"reasoning": "", "verdict": "CORRECT"}`})
	got, err = j.Grade(ctx, "Q", "Rex", "Rex")
	require.NoError(t, err)
	require.Equal(t, eval.VerdictWrong, got.Verdict, "malformed three times: wrong")
	require.ErrorIs(t, got.Err, llm.ErrMalformedOutput)
	require.Equal(t, 1+eval.JudgeRetries, got.ChatCalls)
}
