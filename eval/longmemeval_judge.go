package eval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/credohq/credo/llm"
)

// LongMemEval's judging prompts, verbatim from its evaluation code
// (src/evaluation/evaluate_qa.py, get_anscheck_prompt), one per question type and one
// for abstention questions. Each takes the question, the gold answer (a rubric for
// preferences, an explanation for abstention) and the model's response; the judge
// answers yes or no, and "yes" anywhere in its answer, in any case, is a yes, as there.
const (
	longMemEvalPromptDefault    = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no. \n\nQuestion: %s\n\nCorrect Answer: %s\n\nModel Response: %s\n\nIs the model response correct? Answer yes or no only."
	longMemEvalPromptTemporal   = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no. In addition, do not penalize off-by-one errors for the number of days. If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still correct. \n\nQuestion: %s\n\nCorrect Answer: %s\n\nModel Response: %s\n\nIs the model response correct? Answer yes or no only."
	longMemEvalPromptUpdate     = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response contains some previous information along with an updated answer, the response should be considered as correct as long as the updated answer is the required answer.\n\nQuestion: %s\n\nCorrect Answer: %s\n\nModel Response: %s\n\nIs the model response correct? Answer yes or no only."
	longMemEvalPromptPreference = "I will give you a question, a rubric for desired personalized response, and a response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: %s\n\nRubric: %s\n\nModel Response: %s\n\nIs the model response correct? Answer yes or no only."
	longMemEvalPromptAbstention = "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes if the model correctly identifies the question as unanswerable. The model could say that the information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: %s\n\nExplanation: %s\n\nModel Response: %s\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only."
)

// maxLongMemEvalJudgment bounds the judge's answer kept in a report: it is told to
// answer yes or no only.
const maxLongMemEvalJudgment = 200

// LongMemEvalJudgePrompt is the prompt LongMemEval judges a response to q with.
func LongMemEvalJudgePrompt(q LongMemEvalQuestion, response string) string {
	template := longMemEvalPromptDefault
	switch {
	case q.Abstention:
		template = longMemEvalPromptAbstention
	case q.Type == LongMemEvalTemporalReasoning:
		template = longMemEvalPromptTemporal
	case q.Type == LongMemEvalKnowledgeUpdate:
		template = longMemEvalPromptUpdate
	case q.Type == LongMemEvalSingleSessionPreference:
		template = longMemEvalPromptPreference
	}
	return fmt.Sprintf(template, q.Question, q.Answer, response)
}

// GradeLongMemEval asks chat LongMemEval's judging prompt for response, as the
// benchmark does: one user message, free text, a yes anywhere is CORRECT. A failed call
// is asked again up to JudgeRetries times, then the answer is WRONG with Err set. The
// error returned is only ctx's.
func GradeLongMemEval(ctx context.Context, chat llm.Chatter, q LongMemEvalQuestion, response string) (Judgment, error) {
	start := time.Now()
	out := Judgment{Verdict: VerdictWrong}
	req := llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: LongMemEvalJudgePrompt(q, response)}}}
	var err error
	for range JudgeRetries + 1 {
		var res llm.ChatResponse
		res, err = chat.Chat(ctx, req)
		out.ChatCalls++
		out.PromptTokens += res.Usage.PromptTokens
		out.CompletionTokens += res.Usage.CompletionTokens
		if err == nil {
			text := strings.TrimSpace(res.Content)
			if strings.Contains(strings.ToLower(text), "yes") {
				out.Verdict = VerdictCorrect
			}
			out.Reasoning = truncateRunes(text, maxLongMemEvalJudgment)
			break
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	out.Err = err
	out.Duration = time.Since(start)
	return out, nil
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
