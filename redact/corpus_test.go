package redact

import (
	"math/rand/v2"
	"strings"
)

// A corpus of texts with the secrets they hold, to measure each detector: every secret
// of the positives must be found, nothing in the negatives.

// secret is one planted secret: its text and its kind.
type secret struct {
	kind Kind
	text string
}

// randomOf is n characters of alphabet, from rng.
func randomOf(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlSafe = alnum + "_-"
	base32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

// APIKeys returns one made-up key of each provider the API-key detector knows, in the
// shapes the providers issue: OpenAI (project and legacy), Anthropic, AWS (long-lived
// and temporary), GitHub (personal, OAuth, app, fine-grained), Slack (bot and user),
// Stripe (secret and restricted), Google.
func apiKeys(seed uint64) map[string]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := func(alphabet string, n int) string { return randomOf(rng, alphabet, n) }
	return map[string]string{
		"openai-project":    "sk-proj-" + r(urlSafe, 74) + "T3BlbkFJ" + r(urlSafe, 74),
		"openai-legacy":     "sk-" + r(alnum, 20) + "T3BlbkFJ" + r(alnum, 20),
		"anthropic":         "sk-ant-api03-" + r(urlSafe, 93) + "AA",
		"aws-akia":          "AKIA" + r(base32, 16),
		"aws-asia":          "ASIA" + r(base32, 16),
		"github-ghp":        "ghp_" + r(alnum, 36),
		"github-gho":        "gho_" + r(alnum, 36),
		"github-ghs":        "ghs_" + r(alnum, 36),
		"github-pat":        "github_pat_" + r(alnum+"_", 82),
		"slack-bot":         "xoxb-" + r("0123456789", 11) + "-" + r("0123456789", 12) + "-" + r(alnum, 24),
		"slack-user":        "xoxp-" + r("0123456789", 11) + "-" + r("0123456789", 11) + "-" + r("0123456789", 12) + "-" + r(alnum, 32),
		"stripe-secret":     "sk_live_" + r(alnum, 24),
		"stripe-restricted": "rk_live_" + r(alnum, 24),
		"google":            "AIza" + r(urlSafe, 35),
	}
}

// jwtSample is the example token of RFC 7519's introduction site, signed HS256.
const jwtSample = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

// pemKey is a made-up PEM private key: its body is random, as a real key's looks.
func pemKey(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for range 6 {
		b.WriteString(randomOf(rng, alnum+"+/", 64))
		b.WriteByte('\n')
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return b.String()
}

// positives are sentences that hold secrets, with the secrets.
func positives() []struct {
	text    string
	secrets []secret
} {
	type pos = struct {
		text    string
		secrets []secret
	}
	out := []pos{
		{"My card is 4111 1111 1111 1111, expires 12/29.", []secret{{Card, "4111 1111 1111 1111"}}},
		{"card: 5500-0000-0000-0004", []secret{{Card, "5500-0000-0000-0004"}}},
		{"Amex 378282246310005 please", []secret{{Card, "378282246310005"}}},
		{"It's 3782 822463 10005 on the back", []secret{{Card, "3782 822463 10005"}}},
		{"Discover 6011111111111117.", []secret{{Card, "6011111111111117"}}},
		{"JCB: 3530111333300000", []secret{{Card, "3530111333300000"}}},
		{"old visa 4222222222222", []secret{{Card, "4222222222222"}}},
		{"the new mastercard 2223003122003222 works", []secret{{Card, "2223003122003222"}}},
		{"UnionPay 6200000000000005", []secret{{Card, "6200000000000005"}}},
		{"diners 3622 720627 1667", []secret{{Card, "3622 720627 1667"}}},
		{"Pay to GB82 WEST 1234 5698 7654 32 by Friday", []secret{{IBAN, "GB82 WEST 1234 5698 7654 32"}}},
		{"IBAN DE89370400440532013000.", []secret{{IBAN, "DE89370400440532013000"}}},
		{"my IBAN is FR14 2004 1010 0505 0001 3M02 606", []secret{{IBAN, "FR14 2004 1010 0505 0001 3M02 606"}}},
		{"NL91ABNA0417164300, the joint account", []secret{{IBAN, "NL91ABNA0417164300"}}},
		{"Swiss one: CH93 0076 2011 6238 5295 7", []secret{{IBAN, "CH93 0076 2011 6238 5295 7"}}},
		{"be68 5390 0754 7034 (lower case)", []secret{{IBAN, "be68 5390 0754 7034"}}},
		{"Norway NO9386011117947", []secret{{IBAN, "NO9386011117947"}}},
		{"ES91 2100 0418 4502 0005 1332", []secret{{IBAN, "ES91 2100 0418 4502 0005 1332"}}},
		{"token " + jwtSample + " expires soon", []secret{{Token, jwtSample}}},
		{"curl -H 'Authorization: Bearer 8f3b2c9d0e1a4b5c6d7e8f90a1b2c3d4' https://api.example.com", []secret{{Token, "8f3b2c9d0e1a4b5c6d7e8f90a1b2c3d4"}}},
		{"use bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA== for the staging API", []secret{{Token, "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=="}}},
		{"here is the key:\n" + pemKey(1) + "\nkeep it safe", []secret{{PrivateKey, pemKey(1)}}},
		{"my password is hunter2", []secret{{Password, "hunter2"}}},
		{"Password: Tr0ub4dor&3", []secret{{Password, "Tr0ub4dor&3"}}},
		{"the wifi password is 'correcthorsebattery'.", []secret{{Password, "correcthorsebattery"}}},
		{"My PIN is 4921.", []secret{{Password, "4921"}}},
		{"passcode=Zebra!42 for the door", []secret{{Password, "Zebra!42"}}},
	}
	keys := apiKeys(7)
	for _, name := range []string{"openai-project", "openai-legacy", "anthropic", "aws-akia", "aws-asia", "github-ghp", "github-gho",
		"github-ghs", "github-pat", "slack-bot", "slack-user", "stripe-secret", "stripe-restricted", "google"} {
		out = append(out, pos{"my " + name + " key is " + keys[name] + " thanks", []secret{{APIKey, keys[name]}}})
	}
	return out
}

// negatives are ordinary talk: phone numbers, dates, order and tracking numbers,
// prices, identifiers, and talk about passwords that gives none.
var negatives = []string{
	"Call me at +1 415 555 0132 or (415) 555-0132.",
	"My UK number is +44 20 7946 0958, mobile +44 7700 900123.",
	"In Shanghai: +86 138 0013 8000.",
	"From abroad dial 0044 7700 900 123.",
	"We met on 2026-03-20 at 14:00, or was it 20/03/2026?",
	"The log says 2026-03-20T14:00:00Z and 1774012345678 ms.",
	"Timestamp 20260320140000123 in the export.",
	"Order #112-3456789-1234567 shipped; tracking 1Z999AA10123456784.",
	"Invoice INV-2026-000123 for $1,299.99, or €4.50 a month, 1 234 567,89 € in total.",
	"The order number is 4000123456 and the account 12345678.",
	"The ISBN is 978-3-16-148410-0.",
	"That card 4111 1111 1111 1112 was declined (a typo).",
	"Reference 1234 5678 9012 3456 on the letter.",
	"Reference 1234 5678 9012 3456 7890 on the letter.",
	"Request id 123e4567-e89b-12d3-a456-426614174000.",
	"Commit 05da6a7c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b fixed it.",
	"The docs' example key AKIAIOSFODNN7EXAMPLE is not a secret.",
	"My password is too long, and the password is the same as before.",
	"I forgot my password, is there a reset link?",
	"The password is required; passwords are case sensitive.",
	"Pin it to the top. The PIN is in my wallet.",
	"He was the bearer of bad news, a bearer bond of 1000000000000000.",
	"The passport is in the drawer, the key is under the mat.",
	"DE12 is a road, and GB is a country code.",
	"I moved to Miami in 2019 and work at Stripe as an engineer.",
	"sk-ant and sk-proj are prefixes I read about; ghp_ too.",
	"Authorization: Bearer token goes in the header.",
	"Version 3.14159265358979 of the thing, and pi is 3.141592653589793.",
}
