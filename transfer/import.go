package transfer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/reembed"
	"github.com/credohq/credo/transcript"
)

// The formats an import reads.
const (
	FromCredo = "credo" // a credo export (the default)
	FromMem0  = "mem0"  // mem0's exported memories
)

// ErrScope is an import into a scope the caller may not write: nothing is imported.
var ErrScope = errors.New("the scope is outside the caller's")

// Config is what an Importer needs.
type Config struct {
	Store *memory.Store
	// Embed embeds what was imported, in EmbedModel, Batch texts a call
	// (reembed.DefaultBatch when zero). Without both, the rows stay without a vector:
	// reads still find them, and the scope's next extraction or `beliefs reembed` embeds
	// them.
	Embed      llm.Embedder
	EmbedModel string
	Batch      int
	// Jobs inserts the extraction job of a scope with pending episodes, and the
	// consolidation of each scope imported from mem0.
	Jobs riverjobs.Inserter
	// Redact is the deployment's redaction (REDACT; redact.Default when nil): what is
	// imported passes it, with each scope's policy, before it is embedded or extracted.
	Redact *redact.Redactor
	// Observer, when set, is told each import's report (metrics).
	Observer func(*Report)
	Logger   *slog.Logger
	Now      func() time.Time
}

// Importer imports exports and mem0's memories into scopes that hold nothing.
type Importer struct {
	cfg Config
}

// NewImporter returns an Importer.
func NewImporter(cfg Config) (*Importer, error) {
	cfg.Batch = cmp.Or(cfg.Batch, reembed.DefaultBatch)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch {
	case cfg.Store == nil:
		return nil, errors.New("transfer: Store is required")
	case cfg.Batch < 1 || cfg.Batch > 2048:
		return nil, fmt.Errorf("transfer: Batch %d is outside 1..2048", cfg.Batch)
	}
	return &Importer{cfg: cfg}, nil
}

// ImportParams says what a file is and where its scopes go.
type ImportParams struct {
	// From is FromCredo (or "") or FromMem0.
	From string
	// ScopeTemplate makes a mem0 memory's scope from its ids (DefaultScopeTemplate when
	// empty).
	ScopeTemplate string
	// ScopeMap renames the scopes on their way in.
	ScopeMap []ScopeMapping
	// Allowed, when set, says whether the caller may import into a scope (an API key's
	// prefixes); a scope it refuses is ErrScope, and nothing is imported.
	Allowed func(scope string) bool
}

// Report is what an import did.
type Report struct {
	Scopes []ScopeReport `json:"scopes"`
	// EmbeddingModel is the model the imported rows were embedded with; empty when no
	// embedder is configured.
	EmbeddingModel string `json:"embedding_model"`
	// EmbeddedRows counts the beliefs, revision events and dismissed review items given a
	// vector, in EmbeddingCalls calls.
	EmbeddedRows   int `json:"embedded_rows"`
	EmbeddingCalls int `json:"embedding_calls"`
	// EmbeddingError, when the embedding model failed, says so: the memory is imported,
	// and the rows left without a vector are embedded later (see NotEmbeddedError).
	EmbeddingError string `json:"embedding_error,omitempty"`
	// ExtractionJobs and ConsolidationJobs count the jobs queued: the extraction of
	// scopes with pending episodes, the consolidation of scopes from mem0.
	ExtractionJobs    int `json:"extraction_jobs"`
	ConsolidationJobs int `json:"consolidation_jobs"`
}

// ScopeReport is what was imported into one scope, and from which.
type ScopeReport struct {
	// ExportedAs is the scope as the file named it (for mem0, the scope the template
	// made), before ScopeMap renamed it.
	ExportedAs string `json:"exported_as"`
	memory.ScopeImported
}

// NotEmbeddedError is an import whose memory is stored but whose embedding failed: reads
// find the rows without a vector (unranked), and the scope's next extraction, or
// `beliefs reembed --scope S`, embeds them.
type NotEmbeddedError struct {
	Scopes []string
	Err    error
}

func (e *NotEmbeddedError) Error() string {
	return fmt.Sprintf("imported, but embedding failed (%v): run `beliefs reembed --scope S` for %s to finish", e.Err, strings.Join(e.Scopes, ", "))
}

func (e *NotEmbeddedError) Unwrap() error { return e.Err }

// Import reads a file from r and imports it, all or nothing: every record is read and
// checked (sizes included: what PostgreSQL would refuse is refused here, naming its
// line), and every scope found empty, before the first is written; a malformed record
// is a *transcript.InputError naming its line, a scope that holds memory a
// *memory.NotEmptyError, and nothing is imported. Every scope is then imported in one
// transaction, with the extraction jobs of the pending episodes, so that a failure
// while writing leaves no scope half-imported and the run can simply be repeated. What
// was imported is embedded in batches afterwards; the scopes of a mem0 import get a
// consolidation pass. The import makes no chat call.
func (im *Importer) Import(ctx context.Context, r io.Reader, p ImportParams) (rep *Report, err error) {
	defer func() {
		if rep != nil && im.cfg.Observer != nil {
			im.cfg.Observer(rep)
		}
	}()
	pl, err := im.read(r, p)
	if err != nil {
		return nil, err
	}
	from, err := im.place(pl, p)
	if err != nil {
		return nil, err
	}
	if err := im.cfg.Store.CheckImport(ctx, pl.scopes); err != nil {
		return nil, err
	}
	names := make([]string, len(pl.scopes))
	pending := false
	for i, sc := range pl.scopes {
		names[i] = sc.Scope
		pending = pending || sc.Pending() > 0
	}
	if im.cfg.Jobs == nil && (pending || pl.mem0) {
		return nil, errors.New("transfer: no job inserter configured for the jobs the import needs")
	}
	holding, err := im.cfg.Store.HoldingMemory(ctx, names)
	if err != nil {
		return nil, err
	}
	if len(holding) > 0 {
		return nil, &memory.NotEmptyError{Scopes: holding}
	}
	rep, err = im.importScopes(ctx, pl.scopes, from)
	if err != nil {
		return nil, err
	}
	for _, sc := range rep.Scopes {
		im.cfg.Logger.InfoContext(ctx, "imported", "scope", sc.Scope, "beliefs", sc.Beliefs, "events", sc.Events, "episodes", sc.Episodes)
	}
	embedErr := im.embed(ctx, rep)
	if pl.mem0 {
		err := im.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
			n, err := consolidate.Enqueue(ctx, tx, im.cfg.Jobs, names...)
			rep.ConsolidationJobs = n
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("queue the consolidation of the imported scopes: %w", err)
		}
	}
	if embedErr != nil {
		rep.EmbeddingError = embedErr.Error()
		return rep, &NotEmbeddedError{Scopes: names, Err: embedErr}
	}
	return rep, nil
}

func (im *Importer) read(r io.Reader, p ImportParams) (*plan, error) {
	switch p.From {
	case "", FromCredo:
		return readExport(r)
	case FromMem0:
		return readMem0(r, cmp.Or(p.ScopeTemplate, DefaultScopeTemplate), im.cfg.Now())
	}
	return nil, transcript.InputErrorf(ErrInput, "from", "%q is not credo or mem0", p.From)
}

// place renames the plan's scopes by p.ScopeMap and checks that the caller may write
// them; it returns each scope's name before.
func (im *Importer) place(pl *plan, p ImportParams) ([]string, error) {
	from := make([]string, len(pl.scopes))
	used := make([]bool, len(p.ScopeMap))
	into := map[string]string{}
	for i, sc := range pl.scopes {
		from[i] = sc.Scope
		to, which := mapScope(p.ScopeMap, sc.Scope)
		if which >= 0 {
			used[which] = true
		}
		if err := transcript.CheckScope(fmt.Sprintf("scope %q as mapped", sc.Scope), to); err != nil {
			return nil, err
		}
		if other, ok := into[to]; ok {
			return nil, transcript.InputErrorf(ErrInput, "scope map", "scopes %q and %q would both be imported as %q", other, sc.Scope, to)
		}
		into[to] = sc.Scope
		if p.Allowed != nil && !p.Allowed(to) {
			return nil, fmt.Errorf("import into %q: %w", to, ErrScope)
		}
		sc.Scope = to
	}
	for i, ok := range used {
		if !ok {
			return nil, transcript.InputErrorf(ErrInput, "scope map", "%s=%s: no scope of the file is %s or under it",
				p.ScopeMap[i].Old, p.ScopeMap[i].New, p.ScopeMap[i].Old)
		}
	}
	return from, nil
}

// importScopes imports every scope in one transaction, with the extraction jobs of
// their pending episodes: the queue locks come first, as in every enqueue, and the jobs
// commit with the episodes they extract. The scopes are written (and so locked) in the
// order of their names, as a subtree's purge locks them, so that two imports or an
// import and a purge never wait on each other in turn; the report lists them as the
// file does. On Citus the transaction spans the scopes' shards, each statement still
// the work of one (a two-phase commit when they lie on several workers).
func (im *Importer) importScopes(ctx context.Context, scopes []*memory.ScopeImport, from []string) (*Report, error) {
	var pending []string
	for _, sc := range scopes {
		if sc.Pending() > 0 {
			pending = append(pending, sc.Scope)
		}
	}
	order := make([]int, len(scopes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(scopes[a].Scope, scopes[b].Scope) })
	var rep *Report
	err := im.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
		rep = &Report{Scopes: make([]ScopeReport, len(scopes))}
		if len(pending) > 0 {
			n, err := extract.ScheduleTx(ctx, tx, im.cfg.Jobs, pending)
			if err != nil {
				return err
			}
			rep.ExtractionJobs = n
		}
		for _, i := range order {
			got, err := im.cfg.Store.ImportTx(ctx, tx, scopes[i], im.cfg.Redact)
			if err != nil {
				return err
			}
			rep.Scopes[i] = ScopeReport{ExportedAs: from[i], ScopeImported: *got}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w (nothing was imported)", err)
	}
	return rep, nil
}

// embed gives the imported rows vectors of the embedding model, Batch texts a call,
// and the dismissed review items theirs.
func (im *Importer) embed(ctx context.Context, rep *Report) error {
	if im.cfg.Embed == nil || im.cfg.EmbedModel == "" {
		return nil
	}
	rep.EmbeddingModel = im.cfg.EmbedModel
	store, model := im.cfg.Store, im.cfg.EmbedModel
	for i := range rep.Scopes {
		sc := &rep.Scopes[i]
		err := im.embedRows(ctx, rep, sc.ToEmbed, func(rows []memory.Unembedded, vecs [][]float32) (int, error) {
			return store.SetImportedEmbeddings(ctx, sc.Scope, model, rows, vecs)
		})
		if err != nil {
			return err
		}
		sc.ToEmbed = nil
		// Each dismissal is a few-shot example of what not to do, found by its vector.
		dismissals, err := store.UnembeddedDismissals(ctx, sc.Scope, model)
		if err != nil {
			return err
		}
		err = im.embedRows(ctx, rep, dismissals, func(rows []memory.Unembedded, vecs [][]float32) (int, error) {
			return store.SetDismissalEmbeddings(ctx, sc.Scope, model, rows, vecs)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// embedRows embeds rows, Batch texts a call, and stores each call's vectors with set.
func (im *Importer) embedRows(ctx context.Context, rep *Report, rows []memory.Unembedded,
	set func([]memory.Unembedded, [][]float32) (int, error)) error {
	for chunk := range slices.Chunk(rows, im.cfg.Batch) {
		texts := make([]string, len(chunk))
		for j, u := range chunk {
			texts[j] = u.Text
		}
		vecs, err := llm.EmbedTexts(ctx, im.cfg.Embed, texts)
		rep.EmbeddingCalls++
		if err != nil {
			return err
		}
		if err := im.cfg.Store.EnsureEmbeddingModel(ctx, im.cfg.EmbedModel, len(vecs[0])); err != nil {
			return err
		}
		n, err := set(chunk, vecs)
		rep.EmbeddedRows += n
		if err != nil {
			return err
		}
	}
	return nil
}
