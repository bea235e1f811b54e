package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Headers of a delivery, as Standard Webhooks names them (webhook-id, ...), in Go's
// canonical form: header names are case-insensitive.
const (
	HeaderID        = "Webhook-Id"
	HeaderTimestamp = "Webhook-Timestamp"
	HeaderSignature = "Webhook-Signature"
)

// Sign is the webhook-signature of a message: "v1," and the base64 HMAC-SHA256 of
// "id.timestamp.body" under each key, separated by spaces (during a rotation, the new
// secret's and the old one's).
func Sign(keys [][]byte, id string, at time.Time, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = "v1," + signature(k, id, at.Unix(), body)
	}
	return strings.Join(sigs, " ")
}

func signature(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify reports whether header (webhook-signature) holds a v1 signature of the message
// under key, as a receiver checks it: for tests, and for Go receivers.
func Verify(key []byte, id, timestamp string, body []byte, header string) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	want := signature(key, id, ts, body)
	for s := range strings.FieldsSeq(header) {
		if v, sig, ok := strings.Cut(s, ","); ok && v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
