package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/credohq/credo/transcript"
)

const apiDescription = `credo keeps an AI agent's long-term memory true over time. Agents push conversation
transcripts; a worker extracts beliefs from each and revises what memory held before, keeping
every belief's history. Agents read current beliefs, ranked by a question when one is given;
a question about the past ("where did they live before?") is answered from history.

Every request but this document's carries a bearer API key, credo_<prefix>_<secret>, made with
` + "`beliefs keys create`" + ` and bound to scope prefixes and rights: write (transcripts), read (the GETs),
operate (assert, correct, revert, review decisions, soft forget) and purge. A request outside the key's scopes is refused
with 403, or with the same 404 as an unknown id when it names a belief or episode by id, so that
nothing tells whether another tenant's data exists.

Errors have one shape, {"error": {"code": "...", "message": "...", "details": [...]}}, where code
is stable: invalid_request (400), unauthorized (401), forbidden (403), not_found and no_route (404),
method_not_allowed (405), request_timeout (408), refused (409), body_too_large and too_many_records
(413), unsupported_media_type (415), rate_limited (429, with Retry-After), internal (500),
embedding_failed (502), api_disabled (503).`

func (s *Server) humaConfig() huma.Config {
	c := huma.DefaultConfig("credo", Version)
	// The document is served by an operation of its own, at OpenAPIPath; no docs page
	// (it would load scripts from a CDN), no per-schema routes, no $schema in answers.
	c.OpenAPIPath, c.DocsPath, c.SchemasPath = "", "", ""
	c.CreateHooks = nil
	c.RejectUnknownQueryParameters = true
	c.Formats = strictFormats()
	c.Info.Description = apiDescription
	// Relative: the API is served beside this document, by whichever worker serves it.
	c.Servers = []*huma.Server{{URL: "/", Description: "The worker serving this document (HTTP_ADDR)."}}
	c.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "http", Scheme: "bearer", Description: "An API key: credo_<prefix>_<secret>."},
	}
	return c
}

var bearer = []map[string][]string{{"apiKey": {}}}

// op fills what every operation shares: the key it needs and the errors it may answer.
// guard has read the body already, within its limit and time: huma's own limit is set
// above it, and its read deadline off, since a deadline left on the connection would
// cancel a request whose handler outlasts it.
func (s *Server) op(o huma.Operation, errs ...int) huma.Operation {
	o.Security = bearer
	o.Errors = append([]int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}, errs...)
	if o.Method == http.MethodPost && !slices.Contains(o.Errors, http.StatusRequestEntityTooLarge) {
		o.Errors = append(o.Errors, http.StatusRequestEntityTooLarge)
	}
	o.MaxBodyBytes = s.maxBody + 1
	o.BodyReadTimeout = -1
	return o
}

// Inputs of the operations. Huma reads and checks them: a parameter of the wrong type or
// out of range is a 400 invalid_request before the handler runs.
type (
	beliefsInput struct {
		Scope   string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read, e.g. user:42; it must start with one of the key's scope prefixes."`
		Query   string `query:"query" maxLength:"2000" doc:"A question or text: the answer is then the k beliefs nearest to it, and history when it reads as a question about the past."`
		K       int    `query:"k" minimum:"1" maximum:"1000" doc:"How many beliefs to rank when query is given (default 10)."`
		All     bool   `query:"all" doc:"Include superseded and retracted beliefs (history). Forgotten ones are never returned."`
		AsOf    string `query:"as_of" doc:"What was true in the world at this time (RFC 3339 or a date like 2026-03-20)."`
		KnownAt string `query:"known_at" doc:"What memory believed current at this time (RFC 3339 or a date)."`
		Inherit bool   `query:"inherit" doc:"Add the ancestor scopes' beliefs (acme/team:x/user:1 inherits from acme/team:x and acme) on the slots (subject, attribute) the scope does not fill; the nearest scope wins, and each belief keeps its own scope. The key needs no access to the ancestors; of one it does not hold, only the current beliefs show, without quotes, episodes or links."`
	}
	idParam struct {
		ID int64 `path:"id" minimum:"1" doc:"Belief id."`
	}
	episodeParam struct {
		ID int64 `path:"id" minimum:"1" doc:"Episode id, as answered by POST /v1/transcripts."`
	}
	eventsInput struct {
		Scope string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read, e.g. user:42; it must start with one of the key's scope prefixes."`
		Limit int    `query:"limit" minimum:"1" maximum:"10000" default:"100" doc:"At most this many, newest first."`
	}
	transcriptsInput struct {
		ContentType string `header:"Content-Type" doc:"application/json (an object, an array or JSON lines), or application/x-ndjson."`
		RawBody     []byte `contentType:"application/json"`
	}
	assertInput struct {
		Body AssertRequest
	}
	correctInput struct {
		ID   int64 `path:"id" minimum:"1" doc:"Belief id."`
		Body CorrectRequest
	}
	forgetInput struct {
		Body ForgetRequest
	}
	conflictsInput struct {
		Scope string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read, e.g. user:42; it must start with one of the key's scope prefixes."`
		All   bool   `query:"all" doc:"Include resolved items."`
	}
	resolveInput struct {
		ID   int64 `path:"id" minimum:"1" doc:"Review item id."`
		Body ResolveRequest
	}
)

// output wraps an answer's body for huma.
type output[T any] struct {
	Body T
}

func wrap[T any](v *T, err error) (*output[T], error) {
	if err != nil {
		return nil, err
	}
	return &output[T]{Body: *v}, nil
}

// register declares every operation of the API.
func (s *Server) register() {
	huma.Register(s.api, huma.Operation{
		OperationID: "getOpenAPI", Method: http.MethodGet, Path: OpenAPIPath, Tags: []string{"meta"},
		Summary: "This OpenAPI document", Description: "Served without a key.",
		Security: []map[string][]string{}, // no key: stated, so that generators and linters need not guess
	}, func(ctx context.Context, _ *struct{}) (*output[map[string]any], error) {
		return &output[map[string]any]{Body: s.document()}, nil
	})
	s.registerTranscripts()
	s.registerBeliefs()
	s.registerReview()
	s.registerRevert()
	s.registerRead()
	s.registerEntities()
	s.registerTransfer()
	s.registerPolicies()
	s.registerChanges()
	s.registerWebhooks()

	// Huma documents 422 for invalid parameters and bodies; this API answers them 400.
	for _, item := range s.api.OpenAPI().Paths {
		for _, o := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if o != nil {
				delete(o.Responses, strconv.Itoa(http.StatusUnprocessableEntity))
			}
		}
	}
}

// registerTranscripts declares the write side: enqueueing and an episode's state.
func (s *Server) registerTranscripts() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "enqueueTranscripts", Method: http.MethodPost, Path: "/v1/transcripts", Tags: []string{"transcripts"},
		Summary:       "Enqueue transcripts for extraction",
		Description:   "One transcript, an array of them, or JSON lines: the records and checks of `enqueue`. Either every record is enqueued or none; a transcript already stored in its scope (same content) is a duplicate and is not processed again. Needs the write right, and every record's scope within the key's.",
		DefaultStatus: http.StatusAccepted, SkipValidateBody: true,
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusRequestEntityTooLarge), s.postTranscripts)
	s.documentTranscriptBody()

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "getEpisode", Method: http.MethodGet, Path: "/v1/episodes/{id}", Tags: []string{"transcripts"},
		Summary:     "Processing state of one enqueued transcript",
		Description: "pending, applied or failed, with the attempts made and the last error. Needs the read right. An episode outside the key's scopes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *episodeParam) (*output[Episode], error) {
		return wrap(s.episode(ctx, principalFrom(ctx), in.ID))
	})
}

// registerBeliefs declares reading beliefs and an operator's changes to them.
func (s *Server) registerBeliefs() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listBeliefs", Method: http.MethodGet, Path: "/v1/beliefs", Tags: []string{"beliefs"},
		Summary:     "Read beliefs: current, ranked by a question, historical, or at a time",
		Description: "Current beliefs by default. With query, the k nearest to it; a query about the past (\"used to\", \"before\", \"previously\", ...) is answered from history, with whole supersession chains. all, as_of and known_at exclude each other. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway), func(ctx context.Context, in *beliefsInput) (*output[Beliefs], error) {
		return wrap(s.recall(ctx, principalFrom(ctx), RecallRequest{Scope: in.Scope, Query: in.Query, K: in.K, All: in.All, AsOf: in.AsOf, KnownAt: in.KnownAt, Inherit: in.Inherit}))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "beliefHistory", Method: http.MethodGet, Path: "/v1/beliefs/{id}/history", Tags: []string{"beliefs"},
		Summary:     "The supersession chain through one belief, oldest first",
		Description: "Needs the read right. A belief outside the key's scopes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *idParam) (*output[History], error) {
		return wrap(s.history(ctx, principalFrom(ctx), in.ID))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "assertBelief", Method: http.MethodPost, Path: "/v1/beliefs", Tags: []string{"beliefs"},
		Summary:     "Assert a belief as an operator",
		Description: "Applied by the revision engine with origin operator, as `beliefs add` does. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusBadGateway), func(ctx context.Context, in *assertInput) (*output[Revision], error) {
		return wrap(s.assert(ctx, principalFrom(ctx), in.Body))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "correctBelief", Method: http.MethodPost, Path: "/v1/beliefs/{id}/correct", Tags: []string{"beliefs"},
		Summary:     "Correct or retract one belief as an operator",
		Description: "Supersede the belief with statement, or retract it; reason correction (it was never true) or temporal (it changed), as `beliefs correct` does. Needs the operate right. A belief outside the key's scopes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusBadGateway), func(ctx context.Context, in *correctInput) (*output[Revision], error) {
		return wrap(s.correct(ctx, principalFrom(ctx), in.ID, in.Body))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "forget", Method: http.MethodPost, Path: "/v1/forget", Tags: []string{"beliefs"},
		Summary:     "Forget beliefs (soft), or erase them for good (purge)",
		Description: "Exactly one of ids, match, entity and all. Soft forgetting needs the operate right, purge the purge right. An id not in the scope, or a scope without beliefs, is not found; so is an entity name the scope does not know, with the nearest known name.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType), func(ctx context.Context, in *forgetInput) (*output[Forgotten], error) {
		return wrap(s.forget(ctx, principalFrom(ctx), in.Body))
	})
}

// registerReview declares the revision events and the review queue.
func (s *Server) registerReview() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listEvents", Method: http.MethodGet, Path: "/v1/events", Tags: []string{"revisions"},
		Summary:     "Revision events of a scope, newest first",
		Description: "Every applied revision (supersede, retract, reinforce) with what caused it. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *eventsInput) (*output[Events], error) {
		return wrap(s.events(ctx, principalFrom(ctx), in.Scope, in.Limit))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listConflicts", Method: http.MethodGet, Path: "/v1/conflicts", Tags: []string{"review"},
		Summary:     "The review queue: refused revisions and beliefs whose basis changed",
		Description: "Open items, oldest first; all=true adds resolved ones. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *conflictsInput) (*output[Conflicts], error) {
		return wrap(s.conflicts(ctx, principalFrom(ctx), in.Scope, in.All))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "resolveConflict", Method: http.MethodPost, Path: "/v1/conflicts/{id}/resolve", Tags: []string{"review"},
		Summary:     "Decide a review item: apply it or dismiss it",
		Description: "apply carries out the refused revision as an operator (overriding entrenchment), or retracts a belief whose basis changed; dismiss leaves memory as it is. Either closes the item, and the decision becomes a few-shot example of the scope, as `beliefs resolve` does. 409 when the item is already resolved or the revision no longer applies (nothing is changed). Needs the operate right. An item outside the key's scopes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusBadGateway), func(ctx context.Context, in *resolveInput) (*output[Decided], error) {
		return wrap(s.resolve(ctx, principalFrom(ctx), in.ID, in.Body))
	})
}

func (s *Server) postTranscripts(ctx context.Context, in *transcriptsInput) (*output[Enqueued], error) {
	p := principalFrom(ctx)
	if err := s.need(p, RightWrite); err != nil {
		return nil, err
	}
	if mt, _, err := mime.ParseMediaType(in.ContentType); err != nil || (mt != "application/json" && mt != "application/x-ndjson") {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
			"send transcripts as application/json (an object, an array or JSON lines) or application/x-ndjson")
	}
	if n := countRecords(in.RawBody, s.maxRecords); n > s.maxRecords {
		return nil, tooManyRecords(n, s.maxRecords)
	}
	lim := transcript.DefaultLimits()
	lim.MaxRecords = s.maxRecords
	ts, err := transcript.Parse("", bytes.NewReader(in.RawBody), s.now(), lim)
	if err != nil {
		var es transcript.Errors
		if !errors.As(err, &es) || len(es) == 0 {
			return nil, invalid(err.Error())
		}
		details := make([]string, len(es))
		for i, e := range es {
			details[i] = e.Error()
		}
		msg := details[0]
		if len(es) > 1 {
			msg = "invalid transcripts: " + details[0] + " (and more; see details)"
		}
		return nil, invalid(msg, details...)
	}
	return wrap(s.enqueue(ctx, p, ts))
}

// countRecords counts the records of a JSON array or of a sequence of JSON values, up
// to limit+1; malformed JSON ends the count, and Parse reports it.
func countRecords(body []byte, limit int) int {
	body = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("\uFEFF")), " \t\r\n")
	dec := json.NewDecoder(bytes.NewReader(body))
	n := 0
	var raw json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if _, err := dec.Token(); err != nil {
			return 0
		}
		for n <= limit && dec.More() {
			if dec.Decode(&raw) != nil {
				break
			}
			n++
		}
		return n
	}
	for n <= limit {
		if err := dec.Decode(&raw); err != nil {
			if !errors.Is(err, io.EOF) {
				n++ // a broken record still counts
			}
			break
		}
		n++
	}
	return n
}

// Transcript documents one record of POST /v1/transcripts, whose body is read with
// transcript.Parse rather than by huma, so that its checks and messages are enqueue's.
type Transcript struct {
	Scope      string     `json:"scope" minLength:"1" maxLength:"200" doc:"The memory the transcript belongs to, e.g. user:42; it must start with one of the key's scope prefixes."`
	ID         string     `json:"id,omitempty" maxLength:"200" doc:"Your id for the conversation, optional."`
	OccurredAt *time.Time `json:"occurred_at,omitempty" doc:"When the conversation happened (RFC 3339 with a zone); default now."`
	Messages   []Message  `json:"messages" minItems:"1" maxItems:"2000" nullable:"false"`
}

// Message is one message of a Transcript.
type Message struct {
	Role    string     `json:"role" enum:"user,assistant,system,tool"`
	Name    string     `json:"name,omitempty" maxLength:"200" doc:"The speaker, for conversations between several people."`
	Content string     `json:"content" minLength:"1"`
	At      *time.Time `json:"at,omitempty" doc:"When the message was said."`
}

// documentTranscriptBody describes the body of POST /v1/transcripts: one transcript or
// an array of them as application/json, or JSON lines.
func (s *Server) documentTranscriptBody() {
	oapi := s.api.OpenAPI()
	reg := oapi.Components.Schemas
	one := reg.Schema(reflect.TypeFor[Transcript](), true, "Transcript")
	post := oapi.Paths["/v1/transcripts"].Post
	post.RequestBody = &huma.RequestBody{
		Required:    true,
		Description: "A transcript, an array of transcripts, or JSON lines (one transcript per line).",
		Content: map[string]*huma.MediaType{
			"application/json":     {Schema: &huma.Schema{OneOf: []*huma.Schema{one, {Type: huma.TypeArray, Items: one, MinItems: new(1)}}}},
			"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString, Description: "JSON lines: one transcript object per line."}},
		},
	}
}

// document is the OpenAPI document as a JSON value, made once all operations are in.
func (s *Server) document() map[string]any {
	s.docOnce.Do(func() {
		b, err := json.Marshal(s.api.OpenAPI())
		if err == nil {
			err = json.Unmarshal(b, &s.doc)
		}
		if err != nil {
			panic("api: OpenAPI document: " + err.Error())
		}
	})
	return s.doc
}
