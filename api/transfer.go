package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
	"github.com/credohq/credo/transfer"
)

// Export and import (docs/api.md, "Export and import"): the same operations as `beliefs
// export` and `beliefs import`, through package transfer.

type (
	exportInput struct {
		Scope       string `query:"scope" maxLength:"200" doc:"The scope to export; give this or scope_prefix. It must start with one of the key's scope prefixes."`
		ScopePrefix string `query:"scope_prefix" maxLength:"200" doc:"Export every scope starting with this prefix, which the key's prefixes must cover."`
		Since       string `query:"since" doc:"Only what changed at or after this time (RFC 3339 or a date): a part of memory, which is not imported."`
	}
	importInput struct {
		From          string   `query:"from" enum:"credo,mem0" default:"credo" doc:"credo: the body is an export (JSON Lines). mem0: mem0's exported memories, {\"results\": [...]} or the array, as JSON."`
		ScopeTemplate string   `query:"scope_template" maxLength:"200" doc:"With from=mem0: each memory's scope, a fixed one (user:alex) or from {user_id}, {agent_id}, {app_id} and {run_id} (default user:{user_id})."`
		ScopeMap      []string `query:"scope_map,explode" maxItems:"100" doc:"OLD=NEW, repeatable: import the exported scope OLD, and every scope under OLD/, as NEW."`
		ContentType   string   `header:"Content-Type" doc:"application/x-ndjson (an export), or application/json (mem0's memories)."`
		RawBody       []byte   `contentType:"application/x-ndjson"`
	}
)

// ImportReport answers POST /v1/import: what was imported into each scope.
type ImportReport struct {
	Scopes            []ScopeImported `json:"scopes" nullable:"false" doc:"What each scope received, in the file's order."`
	EmbeddingModel    string          `json:"embedding_model" doc:"The model the imported beliefs and revisions were embedded with (EMBED_MODEL)."`
	EmbeddedRows      int             `json:"embedded_rows" doc:"Beliefs, revision events and dismissed review items given a vector."`
	EmbeddingCalls    int             `json:"embedding_calls" doc:"Calls to the embedding model, a batch each."`
	EmbeddingError    string          `json:"embedding_error,omitempty" doc:"Set when the embedding model failed: the memory is imported, and what has no vector yet is embedded by the scope's next extraction or beliefs reembed; reads find it meanwhile."`
	ExtractionJobs    int             `json:"extraction_jobs" doc:"Extraction jobs queued for imported pending episodes."`
	ConsolidationJobs int             `json:"consolidation_jobs" doc:"Consolidation passes queued (an import from mem0: one a scope)."`
}

// ScopeImported is what one scope received.
type ScopeImported struct {
	Scope           string         `json:"scope"`
	ExportedAs      string         `json:"exported_as" doc:"The scope as the file named it (scope_map renames it; for mem0, the scope the template made)."`
	Episodes        int            `json:"episodes"`
	Beliefs         int            `json:"beliefs"`
	Dependencies    int            `json:"dependencies"`
	Events          int            `json:"events"`
	ReviewItems     int            `json:"review_items"`
	Entities        int            `json:"entities" doc:"Entities registered: the export's, or those its beliefs' subjects made (an older export, mem0's memories)."`
	PendingEpisodes int            `json:"pending_episodes" doc:"Episodes still to extract: the scope's extraction job is queued."`
	Redacted        map[string]int `json:"redacted" nullable:"false" doc:"Secrets the scope's policy replaced by placeholders on the way in (transcripts, beliefs, revision events, review items), by kind; never the values. Empty when none."`
}

func importReportOf(r *transfer.Report) *ImportReport {
	out := &ImportReport{EmbeddingModel: r.EmbeddingModel, EmbeddedRows: r.EmbeddedRows, EmbeddingCalls: r.EmbeddingCalls,
		EmbeddingError: r.EmbeddingError, ExtractionJobs: r.ExtractionJobs, ConsolidationJobs: r.ConsolidationJobs}
	out.Scopes = mapped(r.Scopes, func(s transfer.ScopeReport) ScopeImported {
		return ScopeImported{Scope: s.Scope, ExportedAs: s.ExportedAs, Episodes: s.Episodes, Beliefs: s.Beliefs, Dependencies: s.Dependencies,
			Events: s.Events, ReviewItems: s.ReviewItems, Entities: s.Entities, PendingEpisodes: s.PendingEpisodes, Redacted: s.Redacted}
	})
	return out
}

// exportStall is how long an export waits for a client that reads nothing before it
// gives up: the snapshot it holds keeps old row versions from being vacuumed.
const exportStall = time.Minute

func (s *Server) registerTransfer() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "exportMemory", Method: http.MethodGet, Path: "/v1/export", Tags: []string{"transfer"},
		Summary: "Export a scope's or a subtree's memory as JSON Lines",
		Description: "One snapshot, streamed as it is read, as `beliefs export` writes it: a header line, then one record a line (scopes, episodes, beliefs, dependencies, revision events, review items), then an end record that tells a whole export from one cut short. No vectors. " +
			"The format is in docs/api.md, its JSON Schema in docs/export.schema.json. Needs the read right; scope_prefix must be covered by the key's prefixes. 404 when the selection holds no memory.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), s.export)
	s.documentExport()

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "importMemory", Method: http.MethodPost, Path: "/v1/import", Tags: []string{"transfer"},
		Summary: "Import an export, or mem0's memories, into scopes that hold nothing",
		Description: "As `beliefs import` does: every record is checked, and every scope found empty, before anything is written; then each scope is imported in one transaction with new ids and every link, time and provenance kept, and embedded with EMBED_MODEL in batches (no chat call). " +
			"Pending episodes get their extraction job; mem0's memories become active beliefs of origin imported, and each scope gets a consolidation pass. A malformed record is a 400 naming its line, a scope that holds memory a 409, and nothing is imported. " +
			"Needs the operate right, and every scope imported into within the key's prefixes. The body is at most API_MAX_BODY_BYTES: larger exports are imported with `beliefs import`.",
		DefaultStatus: http.StatusOK, SkipValidateBody: true,
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusUnsupportedMediaType), func(ctx context.Context, in *importInput) (*output[ImportReport], error) {
		return wrap(s.importMemory(ctx, principalFrom(ctx), in))
	})
	s.documentImportBody()
}

func (s *Server) export(ctx context.Context, in *exportInput) (*huma.StreamResponse, error) {
	p := principalFrom(ctx)
	if err := s.need(p, RightRead); err != nil {
		return nil, err
	}
	q := memory.ExportQuery{Scope: in.Scope, ScopePrefix: in.ScopePrefix}
	var err error
	switch {
	case (in.Scope == "") == (in.ScopePrefix == ""):
		return nil, invalid("give scope or scope_prefix")
	case in.Scope != "":
		err = s.scope(p, RightRead, in.Scope)
	default:
		err = s.prefix(p, RightRead, in.ScopePrefix)
	}
	if err != nil {
		return nil, err
	}
	if q.Since, err = parseTime("since", in.Since); err != nil {
		return nil, err
	}
	exp, err := transfer.OpenExport(ctx, s.store, q)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return nil, newError(http.StatusNotFound, CodeNotFound, "no memory to export: the selection holds no scope")
	case err != nil:
		if msg, ok := transcript.InputMessage(err); ok {
			return nil, invalid(msg)
		}
		return nil, s.internal(ctx, err)
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer exp.Close(ctx)
		hctx.SetHeader("Content-Type", "application/x-ndjson")
		_, w := humago.Unwrap(hctx)
		// The status is sent with the first line: a failure after it cuts the export
		// short, which its missing end record tells the client.
		if err := exp.WriteTo(ctx, &stallWriter{w: hctx.BodyWriter(), rc: http.NewResponseController(w)}); err != nil {
			s.log.WarnContext(ctx, "api: export cut short", "error", err)
		}
	}}, nil
}

// stallWriter moves the connection's write deadline on with every write, so that a long
// export is bounded by a client that stops reading, not by the server's WriteTimeout.
type stallWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (sw *stallWriter) Write(b []byte) (int, error) {
	_ = sw.rc.SetWriteDeadline(time.Now().Add(exportStall))
	return sw.w.Write(b)
}

// documentExport describes GET /v1/export's answer: JSON Lines, not a JSON value.
func (s *Server) documentExport() {
	get := s.api.OpenAPI().Paths["/v1/export"].Get
	get.Responses["200"] = &huma.Response{
		Description: "The export: a header line, one record a line, an end record (docs/export.schema.json).",
		Content: map[string]*huma.MediaType{
			"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString, Description: "JSON Lines."}},
		},
	}
}

// documentImportBody describes POST /v1/import's body: an export, or mem0's memories.
func (s *Server) documentImportBody() {
	post := s.api.OpenAPI().Paths["/v1/import"].Post
	post.RequestBody = &huma.RequestBody{
		Required:    true,
		Description: "An export (JSON Lines, as GET /v1/export answers), or with from=mem0 mem0's memories as JSON.",
		Content: map[string]*huma.MediaType{
			"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString, Description: "An export: JSON Lines."}},
			"application/json":     {Schema: &huma.Schema{Description: "mem0's get_all answer, {\"results\": [...]}, or the array of memories."}},
		},
	}
}

func (s *Server) importMemory(ctx context.Context, p *Principal, in *importInput) (*ImportReport, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	mt, _, err := mime.ParseMediaType(in.ContentType)
	if err != nil || (mt != "application/x-ndjson" && mt != "application/jsonl" && mt != "application/json") {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
			"send an export as application/x-ndjson, or mem0's memories as application/json")
	}
	mapping, err := transfer.ParseScopeMap(in.ScopeMap)
	if err != nil {
		return nil, checkInput(err)
	}
	if in.ScopeTemplate != "" && in.From != transfer.FromMem0 {
		return nil, invalid("scope_template goes with from=mem0")
	}
	rep, err := s.importer.Import(ctx, bytes.NewReader(in.RawBody), transfer.ImportParams{From: in.From, ScopeTemplate: in.ScopeTemplate,
		ScopeMap: mapping, Allowed: p.Sees})
	var notEmpty *memory.NotEmptyError
	var notEmbedded *transfer.NotEmbeddedError
	switch {
	case err == nil:
		return importReportOf(rep), nil
	case errors.As(err, &notEmbedded):
		// The memory is imported: the answer says so, and what is left to embed.
		s.log.ErrorContext(ctx, "api: embed imported memory", "error", err)
		return importReportOf(rep), nil
	case errors.Is(err, transfer.ErrScope):
		return nil, forbiddenScope()
	case errors.As(err, &notEmpty):
		return nil, newError(http.StatusConflict, CodeRefused, notEmpty.Error())
	}
	if msg, ok := transcript.InputMessage(err); ok {
		return nil, invalid(msg)
	}
	return nil, s.internal(ctx, err)
}
