package eval

import (
	"context"
	"errors"
)

// MABConfig configures RunMAB.
type MABConfig struct {
	// Config holds the pipeline's settings, as for RunLocomo.
	Config
	// FactsPerEpisode is how many facts one episode holds (DefaultMABFactsPerEpisode
	// when 0).
	FactsPerEpisode int
}

// MABResult is the outcome of RunMAB.
type MABResult struct {
	BenchRun
	FactsPerEpisode int    `json:"facts_per_episode"`
	Ingest          Ingest `json:"ingest"`
	// Splits are single-hop then multi-hop, those asked; Overall is all questions.
	// Accuracy is substring exact match, as MemoryAgentBench reports it.
	Splits  []MABSplitScore `json:"splits"`
	Overall MABScore        `json:"overall"`
	// Cost is what the run cost, beside its score.
	Cost BenchCost `json:"cost"`
	// AnswerFailures counts questions Ask failed on: wrong.
	AnswerFailures int            `json:"answer_failures"`
	Rows           []MABRowResult `json:"rows"`
}

// MABScore is a FactConsolidation score: substring exact match (the accuracy) and
// exact match.
type MABScore struct {
	QAScore
	ExactMatch         int      `json:"exact_match"`
	ExactMatchAccuracy *float64 `json:"exact_match_accuracy"`
}

func (s *MABScore) add(m MABMatch) {
	s.QAScore.add(m.SubstringMatch)
	if m.ExactMatch {
		s.ExactMatch++
	}
}

func (s *MABScore) finish() {
	s.QAScore.finish()
	s.ExactMatchAccuracy = locomoRate(s.ExactMatch, s.Questions)
}

// MABSplitScore is the score of one split.
type MABSplitScore struct {
	Split string `json:"split"`
	MABScore
}

// MABRowResult is one row's outcome.
type MABRowResult struct {
	Source   string `json:"source"`
	Split    string `json:"split"`
	Scope    string `json:"scope"`
	Facts    int    `json:"facts"`
	Episodes int    `json:"episodes"`
	Applied  int    `json:"applied"`
	// Errors are failures around the questions (embedding, consolidation).
	Errors    []string    `json:"errors"`
	Questions []MABAnswer `json:"questions"`
}

// MABAnswer is one question, its answer and how it matched.
type MABAnswer struct {
	Index     int      `json:"index"`
	Question  string   `json:"question"`
	Gold      []string `json:"gold"`
	Answer    string   `json:"answer"`
	Correct   bool     `json:"correct"`
	Exact     bool     `json:"exact_match"`
	Beliefs   int      `json:"beliefs"`
	Citations int      `json:"citations"`
	Error     string   `json:"error,omitempty"`
}

// RunMAB ingests each FactConsolidation row into a scope of its own (MABScopePrefix +
// source) through the real pipeline, its facts in episodes of FactsPerEpisode in their
// order, each fact dated by its number; once all are extracted, each scope is
// consolidated and asked its questions with recall's Ask, a day after its last fact, and
// each answer is matched against the acceptable ones as MemoryAgentBench does. The
// schema is dropped at the end unless cfg.Keep.
func RunMAB(ctx context.Context, rows []MABRow, cfg MABConfig) (*MABResult, error) {
	if len(rows) == 0 {
		return nil, errors.New("eval: no FactConsolidation rows")
	}
	if cfg.FactsPerEpisode < 1 {
		cfg.FactsPerEpisode = DefaultMABFactsPerEpisode
	}
	scopes := make([]benchScope, len(rows))
	questions := 0
	for i, r := range rows {
		scopes[i] = benchScope{ID: r.Source, Scope: r.Scope(), Sessions: r.Episodes(cfg.FactsPerEpisode)}
		questions += len(r.Questions)
	}
	res := &MABResult{FactsPerEpisode: cfg.FactsPerEpisode, Rows: make([]MABRowResult, len(rows))}
	return runBench(ctx, cfg.Config, scopes, questions, res, func(ctx context.Context, b *bench, i int, done scopeDone) error {
		r := rows[i]
		out := MABRowResult{Source: r.Source, Split: r.Split, Scope: r.Scope(), Facts: len(r.Facts),
			Episodes: len(scopes[i].Sessions), Applied: b.applied[i], Errors: append([]string{}, done.Errors...), Questions: []MABAnswer{}}
		correct := 0
		for _, q := range r.Questions {
			a := MABAnswer{Index: q.Index, Question: q.Question, Gold: q.Answers}
			ans, err := b.ask(ctx, out.Scope, q.Question, r.AskedAt())
			if err != nil {
				return err
			}
			if ans.Err != nil {
				a.Error = ans.Err.Error()
			} else {
				a.Answer, a.Beliefs, a.Citations = ans.Answer, ans.Beliefs, ans.Citations
				m := MatchMAB(ans.Answer, q.Answers)
				a.Correct, a.Exact = m.SubstringMatch, m.ExactMatch
			}
			if a.Correct {
				correct++
			}
			out.Questions = append(out.Questions, a)
		}
		res.Rows[i] = out
		b.scopeNotef("%s: %d of %d questions answered correctly", r.Source, correct, len(r.Questions))
		return nil
	})
}

func (res *MABResult) costs() (*Ingest, *BenchCost) { return &res.Ingest, &res.Cost }

// score fills the scores from the answers.
func (res *MABResult) score() {
	by := map[string]*MABScore{}
	for _, r := range res.Rows {
		sc := entry(by, r.Split)
		for _, a := range r.Questions {
			m := MABMatch{SubstringMatch: a.Correct, ExactMatch: a.Exact}
			sc.add(m)
			res.Overall.add(m)
			if a.Error != "" {
				res.AnswerFailures++
			}
		}
	}
	res.Splits = []MABSplitScore{}
	for _, split := range []string{MABSingleHop, MABMultiHop} {
		if sc := by[split]; sc != nil {
			sc.finish()
			res.Splits = append(res.Splits, MABSplitScore{Split: split, MABScore: *sc})
		}
	}
	res.Overall.finish()
}
