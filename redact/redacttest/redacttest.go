// Package redacttest makes secrets for tests: one made-up key of each provider
// redaction knows, a private key, a JWT, and the other kinds, in the shapes they are
// issued, so that a test can plant them and look for them afterwards.
package redacttest

import (
	"math/rand/v2"
	"strings"
)

// Secret is one planted secret: its kind (a redact.Kind, as a string), what it is,
// and its text.
type Secret struct {
	Kind, Name, Text string
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlSafe = alnum + "_-"
	base32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits  = "0123456789"
)

func random(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// APIKeys is one made-up key of each provider the API-key detector knows, from seed:
// OpenAI (project and legacy), Anthropic, AWS (long-lived and temporary), GitHub
// (personal, OAuth, app, fine-grained), Slack (bot and user), Stripe (secret and
// restricted), Google.
func APIKeys(seed uint64) []Secret {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := func(alphabet string, n int) string { return random(rng, alphabet, n) }
	keys := []Secret{
		{Name: "openai-project", Text: "sk-proj-" + r(urlSafe, 74) + "T3BlbkFJ" + r(urlSafe, 74)},
		{Name: "openai-legacy", Text: "sk-" + r(alnum, 20) + "T3BlbkFJ" + r(alnum, 20)},
		{Name: "anthropic", Text: "sk-ant-api03-" + r(urlSafe, 93) + "AA"},
		{Name: "aws-akia", Text: "AKIA" + r(base32, 16)},
		{Name: "aws-asia", Text: "ASIA" + r(base32, 16)},
		{Name: "github-ghp", Text: "ghp_" + r(alnum, 36)},
		{Name: "github-gho", Text: "gho_" + r(alnum, 36)},
		{Name: "github-ghs", Text: "ghs_" + r(alnum, 36)},
		{Name: "github-pat", Text: "github_pat_" + r(alnum+"_", 82)},
		{Name: "slack-bot", Text: "xoxb-" + r(digits, 11) + "-" + r(digits, 12) + "-" + r(alnum, 24)},
		{Name: "slack-user", Text: "xoxp-" + r(digits, 11) + "-" + r(digits, 11) + "-" + r(digits, 12) + "-" + r(alnum, 32)},
		{Name: "stripe-secret", Text: "sk_live_" + r(alnum, 24)},
		{Name: "stripe-restricted", Text: "rk_live_" + r(alnum, 24)},
		{Name: "google", Text: "AIza" + r(urlSafe, 35)},
	}
	for i := range keys {
		keys[i].Kind = "api_key"
	}
	return keys
}

// JWT is the example token of jwt.io, signed HS256.
const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

// PrivateKey is a made-up PEM private key from seed: its body is random, as a real
// key's looks.
func PrivateKey(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for range 6 {
		b.WriteString(random(rng, alnum+"+/", 64))
		b.WriteByte('\n')
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return b.String()
}

// BearerToken is a made-up bearer token from seed.
func BearerToken(seed uint64) string {
	return random(rand.New(rand.NewPCG(seed, 3)), alnum, 40)
}
