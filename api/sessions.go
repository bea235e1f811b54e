package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultSessionTTL is how long an inspector login lasts when the caller names no time.
const DefaultSessionTTL = 12 * time.Hour

// sessionBytes is the randomness of a session id: 256 bits, so that its SHA-256, like a
// key's, needs no salt and no slow hash.
const sessionBytes = 32

// Session is a browser's login to the inspector: the id its cookie carries, which
// exists in clear only there, and when it ends.
type Session struct {
	Token     string
	ExpiresAt time.Time
}

// StartSession starts a session for p's key that lasts ttl: the browser holds its
// random id, never the key. Only the id's hash is stored; sessions already expired go.
func (s *Server) StartSession(ctx context.Context, p *Principal, ttl time.Duration) (*Session, error) {
	if p.KeyID == 0 {
		return nil, errors.New("start session: a session needs a key")
	}
	raw := make([]byte, sessionBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	out := &Session{Token: hex.EncodeToString(raw)}
	db := s.pool
	if _, err := db.Exec(ctx, "DELETE FROM inspector_session WHERE expires_at <= now()"); err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	err := db.QueryRow(ctx, `INSERT INTO inspector_session (token_hash, key_id, expires_at)
		VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at`,
		hashSecret(out.Token), p.KeyID, ttl.Seconds()).Scan(&out.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	return out, nil
}

// AdmitSession is Admit for a request that carries a session id (the inspector's
// cookie) instead of a key: the session's key, while the session has not expired or
// ended and the key is not revoked, within the key's rate limit. Otherwise a 401 *Error.
func (s *Server) AdmitSession(r *http.Request, token string) (*Principal, error) {
	var (
		p      Principal
		rights []string
	)
	err := s.pool.QueryRow(r.Context(), `SELECT k.id, k.name, k.scope_prefixes, k.rights
		FROM inspector_session s JOIN api_key k ON k.id = s.key_id
		WHERE s.token_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL`,
		hashSecret(token)).Scan(&p.KeyID, &p.Name, &p.Scopes, &rights)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, unauthorized("the session expired, ended, or its key was revoked")
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	for _, r := range rights {
		p.Rights = append(p.Rights, Right(r))
	}
	if e := s.limit(&p); e != nil {
		return nil, e
	}
	return &p, nil
}

// EndSession ends the session whose id is token (a logout); an unknown one is no error.
func (s *Server) EndSession(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, "DELETE FROM inspector_session WHERE token_hash = $1", hashSecret(token)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
