// Package redacttest makes secrets for tests: one made-up key of each provider
// redaction knows, a private key, a JWT, and the other kinds, in the shapes they are
// issued, so that a test can plant them and look for them afterwards.
package redacttest

import (
	"math/rand/v2"
	"strings"
)

// Secret is one planted secret: its kind (a redact.Kind, as a string), what it is,
// and its text; Say, when set, is the sentence that gives it, with %s where Text goes.
type Secret struct {
	Kind, Name, Text string
	Say              string
}

// Sentence is the sentence that gives s: Say's, or "My NAME token is TEXT for now.".
func (s Secret) Sentence() string {
	if s.Say != "" {
		return strings.Replace(s.Say, "%s", s.Text, 1)
	}
	return "My " + s.Name + " token is " + s.Text + " for now."
}

const (
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	hex     = "0123456789abcdef"
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

// Credentials are the credentials of issue 51 that the first detectors let through, made
// up from seed in the shapes they are issued and given as people give them: an AWS
// secret access key by its name, GitLab, Hugging Face, npm, SendGrid, Twilio (account
// SID, auth token, API key), an Azure storage key in a connection string, a database
// URL's password, Doppler, DigitalOcean, a Telegram bot token, a "pwd:" and an "sk-" key
// without OpenAI's marker.
func Credentials(seed uint64) []Secret {
	rng := rand.New(rand.NewPCG(seed, 4))
	r := func(alphabet string, n int) string { return random(rng, alphabet, n) }
	return []Secret{
		{Kind: "api_key", Name: "aws-secret-access-key", Text: r(alnum+"/+", 40), Say: "aws_secret_access_key = %s"},
		{Kind: "api_key", Name: "gitlab", Text: "glpat-" + r(urlSafe, 20), Say: "The GitLab token for CI is %s, it expires in June."},
		{Kind: "api_key", Name: "huggingface", Text: "hf_" + r(letters, 34), Say: "export HF_TOKEN=%s"},
		{Kind: "api_key", Name: "npm", Text: "npm_" + r(alnum, 36), Say: "publish with %s please"},
		{Kind: "api_key", Name: "sendgrid", Text: "SG." + r(urlSafe, 22) + "." + r(urlSafe, 43), Say: "SendGrid: %s"},
		{Kind: "api_key", Name: "twilio-sid", Text: "AC" + r(hex, 32), Say: "the account SID is %s"},
		{Kind: "api_key", Name: "twilio-token", Text: r(hex, 32), Say: "and the Twilio auth token is %s."},
		{Kind: "api_key", Name: "twilio-api-key", Text: "SK" + r(hex, 32), Say: "Twilio API key %s"},
		{Kind: "api_key", Name: "azure", Text: r(alnum+"+/", 86) + "==",
			Say: "DefaultEndpointsProtocol=https;AccountName=acmefiles;AccountKey=%s;EndpointSuffix=core.windows.net"},
		{Kind: "password", Name: "postgres-url", Text: r(alnum, 14), Say: "connect to postgres://admin:%s@db.internal:5432/app"},
		{Kind: "api_key", Name: "doppler", Text: "dp.st.prd." + r(alnum, 43), Say: "the Doppler service token is %s"},
		{Kind: "api_key", Name: "digitalocean", Text: "dop_v1_" + r(hex, 64), Say: "DigitalOcean: %s"},
		{Kind: "api_key", Name: "telegram", Text: r(digits, 10) + ":AA" + r(urlSafe, 33), Say: "my bot's token is %s"},
		{Kind: "password", Name: "pwd", Text: r(alnum, 6) + "!" + r(alnum, 4), Say: "user: ana, pwd: %s"},
		{Kind: "api_key", Name: "sk-key", Text: "sk-" + r(alnum, 48), Say: "The DeepSeek key is %s, keep it."},
	}
}
