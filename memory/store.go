package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultConfidenceFloor is the confidence under which a new belief is not stored.
const DefaultConfidenceFloor = 0.5

// MaxEmbeddingDim is the largest dimension pgvector's HNSW index accepts for vector.
const MaxEmbeddingDim = 2000

// Config configures a Store. The zero value is usable.
type Config struct {
	// ConfidenceFloor: beliefs with a lower confidence are rejected. Zero means
	// DefaultConfidenceFloor; a negative value disables the floor.
	ConfidenceFloor float64
	// Now is the clock for known time (recorded_at, retired_at). Defaults to time.Now.
	Now func() time.Time
	// ExactSearchLimit, when positive, is the number of rows embedded with a model up
	// to which a scope's nearest-neighbour reads scan it exactly; above it IndexScope
	// gives the scope an approximate index of its own. Zero: every scope is scanned
	// exactly, whatever its size.
	ExactSearchLimit int
	// FullScan makes every nearest-neighbour read of a scope's current beliefs compare
	// the full vectors of all of them, as before migration 020, rather than rank their
	// halfvec copies from the covering index and re-rank the nearest few exactly (see
	// nearest): the reference the search benchmark measures the default against.
	FullScan bool
	// Containment configures the guards on a model's destructive directives.
	Containment Containment
	// Announcer, when set, hears of every change in the transaction that makes it (the
	// change feed, webhooks).
	Announcer Announcer
}

// withDefaults returns c with the defaults of what it leaves zero.
func (c Config) withDefaults() Config {
	c.ConfidenceFloor = cmp.Or(c.ConfidenceFloor, DefaultConfidenceFloor)
	c.Containment = c.Containment.withDefaults()
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// querier is what reads need: a pool, a connection or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// batchSender sends batches: a Conn, or a transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Conn is where reads run: the pool, or one connection a caller holds for a few reads
// in a row (see On).
type Conn interface {
	querier
	batchSender
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// Store reads and revises beliefs.
type Store struct {
	pool *pgxpool.Pool
	// db runs reads: the pool, or the connection given to On.
	db     Conn
	floor  float64
	now    func() time.Time
	models *modelCache
	// exactLimit is Config.ExactSearchLimit.
	exactLimit int
	// indexDropWait is how long Purge waits to drop an erased scope's indexes itself
	// (defaultIndexDropWait; tests shorten it).
	indexDropWait time.Duration
	// fullScan is Config.FullScan.
	fullScan bool
	// containment configures the guards on a model's destructive directives.
	containment Containment
	announcer   Announcer
}

// modelCache holds the embedding models registered so far: model → dimension.
type modelCache struct {
	mu   sync.Mutex
	dims map[string]int
}

// NewStore returns a Store on pool.
func NewStore(pool *pgxpool.Pool, cfg *Config) *Store {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	c = c.withDefaults()
	return &Store{pool: pool, db: pool, floor: c.ConfidenceFloor, now: c.Now,
		models: &modelCache{dims: map[string]int{}}, exactLimit: c.ExactSearchLimit, indexDropWait: defaultIndexDropWait, fullScan: c.FullScan, containment: c.Containment,
		announcer: c.Announcer}
}

// On is the store with its reads run on conn, so that a caller making several reads in a
// row takes one connection from the pool, not one per read. Writes still take their own
// transaction from the pool.
func (s *Store) On(conn Conn) *Store {
	c := *s
	c.db = conn
	return &c
}

// clock is the current time at the database's precision, so that times written and read
// back compare equal.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// ErrEmbeddingModel is returned for an embedding that does not fit its model's registration.
var ErrEmbeddingModel = errors.New("embedding model")

// DimensionError is a vector whose dimension is not the one its model was registered
// with: the model answers in another space under the same name (it was replaced, or
// its server loads another one). It is ErrEmbeddingModel; whoever called the model
// tells its caller that the model failed.
type DimensionError struct {
	Model           string
	Dim, Registered int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("%s %q: vectors have %d dimensions, the model was registered with %d", ErrEmbeddingModel, e.Model, e.Dim, e.Registered)
}

// Is reports ErrEmbeddingModel.
func (e *DimensionError) Is(target error) bool { return target == ErrEmbeddingModel }

// EnsureEmbeddingModel registers model with its dimension, once. A model keeps the
// dimension it was first seen with: a vector of another size is an error, so a
// misconfigured model cannot mix spaces. No index is shared by scopes: a scope's
// nearest-neighbour reads scan its rows, or an index of its own (IndexScope).
func (s *Store) EnsureEmbeddingModel(ctx context.Context, model string, dim int) error {
	if model == "" {
		return fmt.Errorf("%w: name is empty", ErrEmbeddingModel)
	}
	if dim < 1 || dim > MaxEmbeddingDim {
		return fmt.Errorf("%w %q: dimension %d is outside 1..%d", ErrEmbeddingModel, model, dim, MaxEmbeddingDim)
	}
	s.models.mu.Lock()
	known, ok := s.models.dims[model]
	s.models.mu.Unlock()
	if ok {
		return sameDim(model, dim, known)
	}

	// Read before writing: a registered model (every start but the first) is then read
	// alone, and on Citus a read of this reference table is served by the local copy,
	// while a write needs every node up.
	err := s.db.QueryRow(ctx, "SELECT dim FROM embedding_model WHERE model = $1", model).Scan(&known)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.inTxRetryingDeadlocks(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('credo:embedding_model'))"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO embedding_model (model, dim) VALUES ($1, $2) ON CONFLICT (model) DO NOTHING", model, dim); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "SELECT dim FROM embedding_model WHERE model = $1", model).Scan(&known)
		})
	}
	if err != nil {
		return fmt.Errorf("register embedding model %q: %w", model, err)
	}
	if err := sameDim(model, dim, known); err != nil {
		return err
	}
	s.models.mu.Lock()
	s.models.dims[model] = dim
	s.models.mu.Unlock()
	return nil
}

// sameDim checks vectors of dim dimensions against model's registered dimension, known.
func sameDim(model string, dim, known int) error {
	if known != dim {
		return &DimensionError{Model: model, Dim: dim, Registered: known}
	}
	return nil
}

// embeddingDim is the registered dimension of model.
func (s *Store) embeddingDim(ctx context.Context, db querier, model string) (int, error) {
	s.models.mu.Lock()
	dim, ok := s.models.dims[model]
	s.models.mu.Unlock()
	if ok {
		return dim, nil
	}
	err := db.QueryRow(ctx, "SELECT dim FROM embedding_model WHERE model = $1", model).Scan(&dim)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%w %q is not registered (EnsureEmbeddingModel)", ErrEmbeddingModel, model)
	}
	if err != nil {
		return 0, fmt.Errorf("look up embedding model %q: %w", model, err)
	}
	s.models.mu.Lock()
	s.models.dims[model] = dim
	s.models.mu.Unlock()
	return dim, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
