package redact

import "github.com/credohq/credo/redact/redacttest"

// A corpus of texts with the secrets they hold, to measure each detector: every secret
// of the positives must be found, nothing in the negatives.

// secret is one planted secret: its text and its kind.
type secret struct {
	kind Kind
	text string
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
		{"token " + redacttest.JWT + " expires soon", []secret{{Token, redacttest.JWT}}},
		{"curl -H 'Authorization: Bearer 8f3b2c9d0e1a4b5c6d7e8f90a1b2c3d4' https://api.example.com", []secret{{Token, "8f3b2c9d0e1a4b5c6d7e8f90a1b2c3d4"}}},
		{"use bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA== for the staging API", []secret{{Token, "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=="}}},
		{"here is the key:\n" + redacttest.PrivateKey(1) + "\nkeep it safe", []secret{{PrivateKey, redacttest.PrivateKey(1)}}},
		{"my password is hunter2", []secret{{Password, "hunter2"}}},
		{"Password: Tr0ub4dor&3", []secret{{Password, "Tr0ub4dor&3"}}},
		{"the wifi password is 'correcthorsebattery'.", []secret{{Password, "correcthorsebattery"}}},
		{"My PIN is 4921.", []secret{{Password, "4921"}}},
		{"passcode=Zebra!42 for the door", []secret{{Password, "Zebra!42"}}},
	}
	for _, k := range redacttest.APIKeys(7) {
		out = append(out, pos{"my " + k.Name + " key is " + k.Text + " thanks", []secret{{APIKey, k.Text}}})
	}
	for _, c := range redacttest.Credentials(7) {
		out = append(out, pos{c.Sentence(), []secret{{Kind(c.Kind), c.Text}}})
	}
	out = append(out,
		pos{"postgres://admin:password@db.example.com/app", []secret{{Password, "password"}}},
		pos{"OPENROUTER_API_KEY=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",
			[]secret{{APIKey, "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"}}},
		// GitLab's routable format, and one longer than gitleaks' rule of 20 characters:
		// the whole token goes, not its first 26 characters.
		pos{"the GitLab token glpat-Xk29fQpL7wZr4TnB8vYc1HsD0mJe6GaU5oRi3.01abc1234 is new",
			[]secret{{APIKey, "glpat-Xk29fQpL7wZr4TnB8vYc1HsD0mJe6GaU5oRi3.01abc1234"}}},
		pos{"or glpat-Xk29fQpL7wZr4TnB8vYc1HsD0mJe6GaU5oRi3, the old one",
			[]secret{{APIKey, "glpat-Xk29fQpL7wZr4TnB8vYc1HsD0mJe6GaU5oRi3"}}},
	)
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
	"The tool printed PWD=/home/ana and HOME=/home/ana; pwd: /srv/app.",
	"Type pwd to see where you are; pwd is a shell built-in, PWD=~/src and pwd=C:\\Users\\ana.",
	"Open https://example.com:8443/docs and ssh://git@github.com/acme/app.git, mailto:ana@example.com.",
	"We use scikit-learn, sk-learn-style pipelines and the task-force-alpha-bravo-charlie plan.",
	"The SKU sk-2024-blue-widget-large-xl-v2 is out of stock.",
	"The account number AC-2231 and the access card are in the drawer.",
	"Meet at 10:45, then 11:AM-ish; the ratio is 3:2 and the score 21:19.",
}
