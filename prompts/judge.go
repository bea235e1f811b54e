package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Judge is what the judge prompt shows: a question, its gold answer and the answer to
// grade. The judge grades benchmark answers (cmd/eval locomo); memory never sees it.
type Judge struct {
	Question string
	Gold     string
	Answer   string
}

// Judge renders the system and user messages of one judge call. Every value is on one
// line, so that no answer can pass for another field of the prompt.
func (p *Prompts) Judge(j Judge) (system, user string, err error) {
	var buf bytes.Buffer
	err = p.judgeUser.Execute(&buf, map[string]any{
		"Question": oneLine(j.Question), "Gold": oneLine(j.Gold), "Answer": oneLine(j.Answer),
	})
	if err != nil {
		return "", "", fmt.Errorf("prompts: render judge: %w", err)
	}
	return p.judgeSystem, buf.String(), nil
}

// JudgeSchema is the JSON schema of a judgment: reasoning, then CORRECT or WRONG.
func JudgeSchema() json.RawMessage { return mustRead("judge.schema.json") }
