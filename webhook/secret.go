package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every webhook secret.
const SecretPrefix = "whsec_"

// secretBytes is the length of a secret's key.
const secretBytes = 32

// ErrNoSecretKey is a webhook created, or sent, without WEBHOOK_SECRET_KEY.
var ErrNoSecretKey = errors.New("WEBHOOK_SECRET_KEY is not set: webhook secrets are stored sealed with it; " +
	"set it to 32 random bytes or more, e.g. `openssl rand -base64 32`, the same on every process")

// MinKeyLen is the shortest WEBHOOK_SECRET_KEY accepted.
const MinKeyLen = 32

// Sealer seals and opens secrets with a key from the environment.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer keyed by key (WEBHOOK_SECRET_KEY): its SHA-256 is the
// AES-256-GCM key. An empty key is ErrNoSecretKey.
func NewSealer(key string) (*Sealer, error) {
	if key == "" {
		return nil, ErrNoSecretKey
	}
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("WEBHOOK_SECRET_KEY has %d characters, it needs %d or more (e.g. `openssl rand -base64 32`)", len(key), MinKeyLen)
	}
	k := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts a secret's key.
func (s *Sealer) Seal(key []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, key, nil)
}

// ErrSealed is a sealed secret that the key does not open: WEBHOOK_SECRET_KEY changed.
var ErrSealed = errors.New("webhook secret does not open with WEBHOOK_SECRET_KEY (was the key changed?)")

// Open decrypts a sealed secret's key.
func (s *Sealer) Open(sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, ErrSealed
	}
	key, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, ErrSealed
	}
	return key, nil
}

// NewSecret is a new secret: its text (whsec_ and base64), shown once, and its key.
func NewSecret() (text string, key []byte) {
	key = make([]byte, secretBytes)
	_, _ = rand.Read(key)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), key
}

// ParseSecret is the key of a secret's text.
func ParseSecret(text string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(text, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("not a webhook secret (whsec_ and base64)")
	}
	return key, nil
}
