package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Right is what a key may do.
type Right string

const (
	// RightWrite enqueues transcripts (POST /v1/transcripts, MCP remember).
	RightWrite Right = "write"
	// RightRead reads beliefs, history, events, conflicts and episodes.
	RightRead Right = "read"
	// RightOperate asserts and corrects beliefs and soft-forgets them.
	RightOperate Right = "operate"
	// RightPurge erases beliefs, or a whole scope, for good.
	RightPurge Right = "purge"
)

// Rights lists every right.
var Rights = []Right{RightWrite, RightRead, RightOperate, RightPurge}

// AllScopes is the scope prefix that matches every scope.
const AllScopes = "*"

// Key format: credo_<prefix>_<secret>, where prefix is 12 and secret 64 lowercase hex
// digits. The prefix finds the key's row and may be shown; the secret is 256 random bits,
// stored only as its SHA-256.
const (
	keyTag       = "credo_"
	prefixBytes  = 6
	secretBytes  = 32
	maxKeyName   = 200
	maxScopeLen  = 200
	maxKeyScopes = 100
)

// ErrInvalidKey is returned for a token that is not a valid, unrevoked key.
var ErrInvalidKey = errors.New("invalid API key")

// ErrKeySpec is returned for a key that can't be created as asked.
var ErrKeySpec = errors.New("invalid key")

// ErrKeyNotFound is returned for an unknown key id.
var ErrKeyNotFound = errors.New("no such key")

// DB is what key management needs: a pool, a connection or a transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Key is an API key as stored: never its secret.
type Key struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	Scopes    []string   `json:"scopes"`
	Rights    []Right    `json:"rights"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// Principal is who a request acts for: a key, or nobody when the API runs without keys
// (on loopback, or behind another gate), in which case every scope and right is allowed.
type Principal struct {
	KeyID  int64 // 0 without a key
	Name   string
	Scopes []string
	Rights []Right
}

// openPrincipal is the principal of requests when no key exists and the address allows it.
var openPrincipal = &Principal{Name: "(no key)", Scopes: []string{AllScopes}, Rights: Rights}

// Can reports whether p has right r.
func (p *Principal) Can(r Right) bool { return slices.Contains(p.Rights, r) }

// Sees reports whether scope starts with one of p's scope prefixes.
func (p *Principal) Sees(scope string) bool {
	for _, prefix := range p.Scopes {
		if prefix == AllScopes || strings.HasPrefix(scope, prefix) {
			return true
		}
	}
	return false
}

// CreateKey stores a new key and returns it with its token, the only time the token
// exists outside the caller: only the SHA-256 of its secret is stored.
//
// scopes are scope prefixes: a key for "tenant:a/" may act on "tenant:a/user:1"; end a
// prefix with a separator, or "tenant:a" also matches "tenant:ab". "*" matches every
// scope.
func CreateKey(ctx context.Context, db DB, name string, scopes []string, rights []Right) (*Key, string, error) {
	name = strings.TrimSpace(name)
	if err := checkLabel("name", name, maxKeyName); err != nil {
		return nil, "", err
	}
	scopes, err := normalizeScopes(scopes)
	if err != nil {
		return nil, "", err
	}
	rights, err = normalizeRights(rights)
	if err != nil {
		return nil, "", err
	}
	for range 5 {
		prefix, secret := randomHex(prefixBytes), randomHex(secretBytes)
		k := &Key{Name: name, Prefix: prefix, Scopes: scopes, Rights: rights}
		err := db.QueryRow(ctx, `INSERT INTO api_key (name, prefix, secret_hash, scope_prefixes, rights)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (prefix) DO NOTHING RETURNING id, created_at`,
			name, prefix, hashSecret(secret), scopes, rightStrings(rights)).Scan(&k.ID, &k.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // the prefix is taken: draw again
		}
		if err != nil {
			return nil, "", fmt.Errorf("create key: %w", err)
		}
		k.CreatedAt = k.CreatedAt.UTC()
		return k, keyTag + prefix + "_" + secret, nil
	}
	return nil, "", errors.New("create key: no free prefix after 5 draws")
}

// ListKeys lists every key, revoked ones included, oldest first.
func ListKeys(ctx context.Context, db DB) ([]Key, error) {
	rows, err := db.Query(ctx, `SELECT id, name, prefix, scope_prefixes, rights, created_at, revoked_at
		FROM api_key ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, scanKey)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// RevokeKey revokes key id at once: its next request is refused, and its inspector
// sessions end. Revoking a revoked key changes nothing.
//
// Two statements, not one with a data-modifying CTE, and the time is a parameter: on
// Citus (api_key is a reference table) a CTE's write can be dropped with its outer
// statement, and now() is refused inside coalesce. The key is revoked first: a session
// of a revoked key is refused even before it is deleted (AdmitSession).
func RevokeKey(ctx context.Context, db DB, id int64) (*Key, error) {
	rows, err := db.Query(ctx, `UPDATE api_key SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1
		RETURNING id, name, prefix, scope_prefixes, rights, created_at, revoked_at`, id, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, fmt.Errorf("revoke key %d: %w", id, err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("key %d: %w", id, ErrKeyNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("revoke key %d: %w", id, err)
	}
	if _, err := db.Exec(ctx, "DELETE FROM inspector_session WHERE key_id = $1", id); err != nil {
		return nil, fmt.Errorf("revoke key %d: end its sessions: %w", id, err)
	}
	return &k, nil
}

// KeysRequired reports whether a key was ever created. From then on every request needs
// a key, even once every key is revoked: revoking the last key must not reopen the
// keyless mode, with every right, to whoever can reach the address.
func KeysRequired(ctx context.Context, db DB) (bool, error) {
	var ok bool
	if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM api_key)").Scan(&ok); err != nil {
		return false, fmt.Errorf("look up keys: %w", err)
	}
	return ok, nil
}

// HasActiveKey reports whether any unrevoked key exists.
func HasActiveKey(ctx context.Context, db DB) (bool, error) {
	var ok bool
	if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM api_key WHERE revoked_at IS NULL)").Scan(&ok); err != nil {
		return false, fmt.Errorf("look up keys: %w", err)
	}
	return ok, nil
}

// Authenticate returns the principal of token, or ErrInvalidKey when it is malformed,
// unknown, wrong or revoked; which of these is not told.
func Authenticate(ctx context.Context, db DB, token string) (*Principal, error) {
	prefix, secret, ok := parseToken(token)
	if !ok {
		return nil, ErrInvalidKey
	}
	var (
		p       Principal
		hash    string
		rights  []string
		revoked *time.Time
	)
	err := db.QueryRow(ctx, `SELECT id, name, secret_hash, scope_prefixes, rights, revoked_at FROM api_key WHERE prefix = $1`,
		prefix).Scan(&p.KeyID, &p.Name, &hash, &p.Scopes, &rights, &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		// Compare anyway, so that an unknown prefix takes as long as a wrong secret.
		subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(hashSecret("")))
		return nil, ErrInvalidKey
	}
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(hash)) != 1 || revoked != nil {
		return nil, ErrInvalidKey
	}
	for _, r := range rights {
		p.Rights = append(p.Rights, Right(r))
	}
	return &p, nil
}

// hashSecret is the stored form of a secret. A plain SHA-256 is enough: the secret is
// 256 random bits, so there is no dictionary to try and no brute force that a slow hash
// would slow further; a slow hash would only cost every request its time.
func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func parseToken(token string) (prefix, secret string, ok bool) {
	rest, ok := strings.CutPrefix(token, keyTag)
	if !ok {
		return "", "", false
	}
	prefix, secret, ok = strings.Cut(rest, "_")
	if !ok || len(prefix) != 2*prefixBytes || len(secret) != 2*secretBytes || !isHex(prefix) || !isHex(secret) {
		return "", "", false
	}
	return prefix, secret, true
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b)
}

func scanKey(row pgx.CollectableRow) (Key, error) {
	var (
		k      Key
		rights []string
	)
	if err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.Scopes, &rights, &k.CreatedAt, &k.RevokedAt); err != nil {
		return Key{}, err
	}
	for _, r := range rights {
		k.Rights = append(k.Rights, Right(r))
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if k.RevokedAt != nil {
		t := k.RevokedAt.UTC()
		k.RevokedAt = &t
	}
	return k, nil
}

func normalizeScopes(scopes []string) ([]string, error) {
	var out []string
	for _, s := range scopes {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if err := checkLabel("scope prefix "+fmt.Sprintf("%q", s), s, maxScopeLen); err != nil {
			return nil, err
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch {
	case len(out) == 0:
		return nil, fmt.Errorf("%w: give at least one scope prefix (or %s for every scope)", ErrKeySpec, AllScopes)
	case len(out) > maxKeyScopes:
		return nil, fmt.Errorf("%w: %d scope prefixes; the limit is %d", ErrKeySpec, len(out), maxKeyScopes)
	}
	return out, nil
}

func normalizeRights(rights []Right) ([]Right, error) {
	var out []Right
	for _, r := range rights {
		r = Right(strings.ToLower(strings.TrimSpace(string(r))))
		if r == "" {
			continue
		}
		if !slices.Contains(Rights, r) {
			return nil, fmt.Errorf("%w: right %q is not one of write, read, operate, purge", ErrKeySpec, r)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: give at least one right: write, read, operate or purge", ErrKeySpec)
	}
	// In a fixed order, whatever the order given.
	slices.SortFunc(out, func(a, b Right) int { return slices.Index(Rights, a) - slices.Index(Rights, b) })
	return out, nil
}

func rightStrings(rights []Right) []string {
	out := make([]string, len(rights))
	for i, r := range rights {
		out[i] = string(r)
	}
	return out
}

func checkLabel(what, s string, maxLen int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: %s is empty", ErrKeySpec, what)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrKeySpec, what)
	case utf8.RuneCountInString(s) > maxLen:
		return fmt.Errorf("%w: %s is longer than %d characters", ErrKeySpec, what, maxLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s contains a control character", ErrKeySpec, what)
	}
	return nil
}
