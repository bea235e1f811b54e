package reliability_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/redact/redacttest"
)

// planted is every secret the redaction test plants, with the placeholder that must
// take its place: a card number, an IBAN, an API key of each provider, a JWT, a bearer
// token, a private key, a password, and an organisation's own employee id.
func planted() []redacttest.Secret {
	out := []redacttest.Secret{
		{Kind: "card", Name: "card", Text: "4111 1111 1111 1111"},
		{Kind: "iban", Name: "iban", Text: "DE89 3704 0044 0532 0130 00"},
		{Kind: "token", Name: "jwt", Text: redacttest.JWT},
		{Kind: "token", Name: "bearer", Text: redacttest.BearerToken(1)},
		{Kind: "private_key", Name: "pem", Text: redacttest.PrivateKey(1)},
		{Kind: "password", Name: "password", Text: "Tr0ub4dor&3-horse"},
		{Kind: "pattern:employee_id", Name: "employee", Text: "EMP-204815"},
	}
	return append(out, redacttest.APIKeys(11)...)
}

// sayings are the sentences that hold the secrets, one message each, around words that
// must reach memory intact.
func sayings(secrets []redacttest.Secret) []string {
	out := []string{"I moved to Porto last spring and I work at a bakery."}
	for _, s := range secrets {
		switch s.Name {
		case "card":
			out = append(out, "My card is "+s.Text+", expiring 12/29.")
		case "iban":
			out = append(out, "Pay my rent to "+s.Text+" on the 3rd.")
		case "bearer":
			out = append(out, "Our staging API wants Authorization: Bearer "+s.Text)
		case "pem":
			out = append(out, "Here is the deploy key:\n"+s.Text+"\nkeep it safe.")
		case "password":
			out = append(out, "my password is "+s.Text)
		case "employee":
			out = append(out, "For HR, I am "+s.Text+".")
		default:
			out = append(out, "My "+s.Name+" token is "+s.Text+" for now.")
		}
	}
	return append(out, "Call me on +351 912 345 678 on Friday 2026-03-20; the order 112-3456789-1234567 cost 49.90 EUR.")
}

// Done when (issue 38): a transcript with a card number, an IBAN, an API key of each
// kind, a JWT, a bearer token, a private key and a password leaves none of them in the
// model's requests (chat and embeddings) or in a pg_dump of the database; the
// placeholders are there and the rest of the conversation is intact. The model's own
// facts pass the same detectors: a card it makes up is redacted before it is stored.
// An organisation's instructions reach its scopes' extraction prompts and no other's.
func TestSecretsNeverReachTheModelOrTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	const instructions = "ACME-POLICY: keep product and account facts; never keep health."
	_, err := p.Store.SetPolicy(ctx, memory.Policy{ScopePrefix: "acme/", Instructions: instructions,
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `\bEMP-\d{6}\b`}}})
	require.NoError(t, err)

	secrets := planted()
	// The model answers what the transcript says, and adds a card of its own making.
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: pipelinetest.Answer(
			pipelinetest.Fact{Statement: "User lives in Porto", Attribute: "location", Quote: "I moved to Porto last spring"},
			pipelinetest.Fact{Statement: "User's card is 5500-0000-0000-0004", Attribute: "card", Quote: "My card is"},
		)}
	})
	at := "2026-03-20T10:00:00Z"
	res := p.Enqueue(t, pipelinetest.T("acme/user:1", "c1", at, sayings(secrets)...),
		pipelinetest.T("globex/user:2", "c2", at, "I moved to Lyon last spring."))
	p.Drain(t)
	require.Equal(t, 2, res.Enqueued)
	want := redact.Counts{"card": 1, "iban": 1, "token": 2, "private_key": 1, "password": 1, "pattern:employee_id": 1, "api_key": 14}
	require.Equal(t, want, res.Redacted)
	ep, err := p.Store.Episode(ctx, res.EpisodeIDs[0])
	require.NoError(t, err)
	require.Equal(t, "applied", string(ep.State))
	require.Equal(t, map[string]int(want), ep.Redactions)

	// The model's requests: every chat prompt and every text embedded.
	var sent strings.Builder
	acmePrompts, globexPrompts := 0, 0
	for _, req := range p.LLM.Requests() {
		sent.WriteString(req.Prompt)
		sent.WriteString(strings.Join(req.Inputs, "\n"))
		if req.Kind != llmtest.KindChat {
			continue
		}
		switch {
		case strings.Contains(req.Prompt, "Scope: acme/user:1"):
			acmePrompts++
			require.Contains(t, req.Messages[0].Content, instructions, "the organisation's instructions are in the system message")
			require.NotContains(t, req.Messages[1].Content, instructions, "never in the transcript's")
			for _, s := range secrets {
				require.Contains(t, req.Prompt, placeholderOf(s), s.Name)
			}
			for _, words := range []string{"I moved to Porto last spring and I work at a bakery.", "Pay my rent to [redacted IBAN] on the 3rd.",
				"+351 912 345 678 on Friday 2026-03-20; the order 112-3456789-1234567 cost 49.90 EUR.", "keep it safe."} {
				require.Contains(t, req.Prompt, words, "the rest of the conversation is intact")
			}
		case strings.Contains(req.Prompt, "Scope: globex/user:2"):
			globexPrompts++
			require.NotContains(t, req.Prompt, "ACME-POLICY", "no other organisation's instructions")
			require.NotContains(t, req.Prompt, "operator_instructions")
		}
	}
	require.Positive(t, acmePrompts)
	require.Positive(t, globexPrompts)
	for _, s := range secrets {
		for _, part := range distinctive(s) {
			require.NotContains(t, sent.String(), part, "%s reached the model", s.Name)
		}
	}

	// The database, as pg_dump writes it.
	dump := pgDump(t, p.Schema)
	for _, s := range append(secrets, redacttest.Secret{Name: "the model's card", Text: "5500-0000-0000-0004"}) {
		for _, part := range distinctive(s) {
			require.NotContains(t, dump, part, "%s is in the database", s.Name)
		}
	}
	for _, s := range secrets {
		require.Contains(t, dump, placeholderOf(s), s.Name)
	}
	require.Contains(t, dump, "User's card is [redacted card number]", "the model's fact, redacted")
	require.Contains(t, dump, "I moved to Porto last spring and I work at a bakery.")
	require.Contains(t, dump, "the order 112-3456789-1234567 cost 49.90 EUR.")
}

// placeholderOf is the placeholder that replaces s.
func placeholderOf(s redacttest.Secret) string {
	if name, ok := strings.CutPrefix(s.Kind, "pattern:"); ok {
		return redact.Pattern{Name: name}.Placeholder()
	}
	return redact.Placeholder(redact.Kind(s.Kind))
}

// distinctive are the parts of a secret to look for wherever it might be stored: the
// whole, and each line of one that has several (a private key's lines are stored with
// their line breaks escaped).
func distinctive(s redacttest.Secret) []string {
	lines := strings.Split(s.Text, "\n")
	if len(lines) == 1 {
		return lines
	}
	var out []string
	for _, l := range lines {
		if !strings.Contains(l, "-----") { // the armour lines are no secret
			out = append(out, l)
		}
	}
	return out
}

// pgDump is the test schema dumped as SQL, data included.
func pgDump(t *testing.T, schema *dbtest.Schema) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "pg_dump", "--dbname="+dbtest.URL(), "--schema="+schema.Name).Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "COPY "+schema.Name+".episode")
	return string(out)
}

// Issue 51: each credential the first detectors let through (an AWS secret access key by
// its name, GitLab, Hugging Face, npm, SendGrid, Twilio, Azure's AccountKey, a database
// URL's password, Doppler, DigitalOcean, Telegram, "pwd:", an "sk-" key without OpenAI's
// marker) is in none of its three copies, neither in what the model is sent nor in a
// pg_dump: the transcript, and the statement and quote of a model that writes it back.
// Each is replaced by its placeholder and the sentence around it is kept. (A password or
// an AWS secret written bare, without the words that name it, is random text: no
// detector can tell it from any other.)
func TestCredentialsNeverReachTheModelOrTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	creds := redacttest.Credentials(21)
	var says []string
	var facts []pipelinetest.Fact
	for _, c := range creds {
		says = append(says, c.Sentence())
		// A model that writes the credential back, in its statement and its quote, with
		// the words that make it one: a password or an AWS secret is found by its name.
		facts = append(facts, pipelinetest.Fact{Statement: "User's " + c.Name + " credential: " + c.Sentence(),
			Attribute: "credential " + c.Name, Quote: c.Sentence()})
	}
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: pipelinetest.Answer(facts...)}
	})
	res := p.Enqueue(t, pipelinetest.T("user:1", "c1", "2026-03-20T10:00:00Z", says...))
	p.Drain(t)
	ep, err := p.Store.Episode(ctx, res.EpisodeIDs[0])
	require.NoError(t, err)
	require.Equal(t, "applied", string(ep.State))

	var sent strings.Builder
	for _, req := range p.LLM.Requests() {
		sent.WriteString(req.Prompt)
		sent.WriteString(strings.Join(req.Inputs, "\n"))
	}
	dump := pgDump(t, p.Schema)
	for _, c := range creds {
		t.Run(c.Name, func(t *testing.T) {
			require.NotContains(t, sent.String(), c.Text, "sent to the model")
			require.NotContains(t, dump, c.Text, "in the database")
			redacted := strings.Replace(c.Say, "%s", placeholderOf(c), 1)
			require.Contains(t, sent.String(), redacted, "the transcript the model reads")
			// The transcript's copy (the episode's messages) and the quote's.
			require.GreaterOrEqual(t, strings.Count(dump, redacted), 2, "the transcript and the quote, redacted")
			require.Contains(t, dump, "User's "+c.Name+" credential: "+redacted, "the statement, redacted")
		})
	}
	require.Equal(t, redact.Counts{"api_key": 13, "password": 2}, res.Redacted)
}
