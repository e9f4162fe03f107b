package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
)

// validName is the OpenAI function-name alphabet.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Registry serves the tool endpoints and validates proposals.
type Registry struct {
	cfg   Config
	store Store
	clock clock.Clock
	cache *schemaCache
	// compiling holds a token per compile in progress: at most half the
	// CPUs compile schemas at once, so a burst of PUTs cannot take the
	// cores live turns need.
	compiling chan struct{}
}

// New returns a registry on store (nil: a MemoryStore) with clock clk (nil:
// the wall clock).
func New(cfg Config, store Store, clk clock.Clock) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	if store == nil {
		store = NewMemoryStore()
	}
	return &Registry{cfg: cfg, store: store, clock: clock.OrReal(clk), cache: newSchemaCache(),
		compiling: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}, nil
}

// Routes returns the tool endpoints, all under scope tools:write:
// PUT, GET and DELETE /v1/tools/{name}, and GET /v1/tools.
func (r *Registry) Routes() []gateway.Route {
	return []gateway.Route{
		{Method: http.MethodPut, Path: "/v1/tools/{name}", Scope: gateway.ScopeToolsWrite, Handler: http.HandlerFunc(r.handlePut)},
		{Method: http.MethodGet, Path: "/v1/tools/{name}", Scope: gateway.ScopeToolsWrite, Handler: http.HandlerFunc(r.handleGet)},
		{Method: http.MethodDelete, Path: "/v1/tools/{name}", Scope: gateway.ScopeToolsWrite, Handler: http.HandlerFunc(r.handleDelete)},
		{Method: http.MethodGet, Path: "/v1/tools", Scope: gateway.ScopeToolsWrite, Handler: http.HandlerFunc(r.handleList)},
	}
}

// Validate checks a proposed action's input against partner's tool name.
// Errors: ErrUnknownTool, or a *PathError (matching ErrInvalid) naming the
// JSON path of the fault, e.g. "input/recipient: missing property 'phone'",
// or the bound an input passed (tools.max_input_bytes, its depth, or the
// work its check would take).
func (r *Registry) Validate(partner, name string, input json.RawMessage) error {
	t, ok, err := r.store.Get(partner, name)
	if err != nil {
		return fmt.Errorf("tools: %q: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("tools: %q: %w", name, ErrUnknownTool)
	}
	sch, err := r.schema(context.Background(), partner, t.InputSchema)
	if err != nil {
		return fmt.Errorf("tools: %q: stored schema: %w", name, err)
	}
	if err := validate(sch, input, r.cfg.limits()); err != nil {
		return fmt.Errorf("tools: %q: %w", name, err)
	}
	return nil
}

// schema returns raw compiled, from the cache (by partner and digest) when
// it was compiled before, refusals included.
func (r *Registry) schema(ctx context.Context, partner string, raw json.RawMessage) (*jsonschema.Schema, error) {
	key := keyOf(partner, raw)
	if c, ok := r.cache.get(key); ok {
		return c.sch, c.err
	}
	select {
	case r.compiling <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sch, err := compile(raw, r.cfg.limits())
	<-r.compiling
	r.cache.put(&cached{key: key, sch: sch, err: err})
	return sch, err
}

// OpenAITool is one entry of an OpenAI-compatible "tools" array.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is a tool as OpenAI-compatible providers take it.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAI returns partner's tools in the OpenAI tools format, sorted by name,
// for converse providers that take tools. A store that cannot answer
// gives none: the turn goes on without tools.
func (r *Registry) OpenAI(partner string) []OpenAITool {
	ts, err := r.store.List(partner)
	if err != nil {
		return nil
	}
	out := make([]OpenAITool, len(ts))
	for i, t := range ts {
		out[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
	}
	return out
}

type putBody struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func partnerOf(r *http.Request) string {
	p, _ := gateway.PrincipalFrom(r.Context())
	return p.PartnerID
}

func toolName(r *http.Request) (string, *gateway.Error) {
	name := mux.Vars(r)["name"]
	if !validName.MatchString(name) {
		return "", gateway.Errorf(gateway.InvalidRequest, "tool name %q must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -", name)
	}
	return name, nil
}

func (r *Registry) handlePut(w http.ResponseWriter, req *http.Request) {
	name, aerr := toolName(req)
	if aerr != nil {
		gateway.WriteError(w, req, aerr)
		return
	}
	var b putBody
	if err := gateway.DecodeJSON(req, &b); err != nil {
		gateway.WriteError(w, req, err)
		return
	}
	desc := strings.TrimSpace(b.Description)
	switch {
	case desc == "":
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "description is required: say what the tool does, for the model"))
		return
	case utf8.RuneCountInString(desc) > r.cfg.MaxDescriptionChars:
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "description is longer than %d characters", r.cfg.MaxDescriptionChars))
		return
	case len(b.InputSchema) == 0 || string(b.InputSchema) == "null":
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "input_schema is required: a JSON Schema object"))
		return
	case len(b.InputSchema) > r.cfg.MaxSchemaBytes:
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "input_schema is larger than %d bytes", r.cfg.MaxSchemaBytes))
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b.InputSchema); err != nil {
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "input_schema is not valid JSON"))
		return
	}
	raw := json.RawMessage(compact.Bytes())
	partner := partnerOf(req)
	if _, err := r.schema(req.Context(), partner, raw); err != nil {
		gateway.WriteError(w, req, gateway.Errorf(gateway.InvalidRequest, "%v", err))
		return
	}
	now := r.clock.Now().UTC()
	t, created, err := r.store.Put(partner, Tool{Name: name, Description: desc, InputSchema: raw, CreatedAt: now, UpdatedAt: now}, r.cfg.MaxPerPartner)
	if errors.Is(err, ErrLimit) {
		gateway.WriteError(w, req, gateway.Errorf(gateway.Conflict,
			"this partner already has %d tools, the maximum: delete one (DELETE /v1/tools/{name}) before adding %q", r.cfg.MaxPerPartner, name))
		return
	}
	if err != nil {
		gateway.WriteError(w, req, storeUnavailable())
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	gateway.WriteJSON(w, status, t)
}

func (r *Registry) handleGet(w http.ResponseWriter, req *http.Request) {
	name, aerr := toolName(req)
	if aerr != nil {
		gateway.WriteError(w, req, aerr)
		return
	}
	t, ok, err := r.store.Get(partnerOf(req), name)
	switch {
	case err != nil:
		gateway.WriteError(w, req, storeUnavailable())
	case !ok:
		gateway.WriteError(w, req, gateway.Errorf(gateway.NotFound, "no tool named %q", name))
	default:
		gateway.WriteJSON(w, http.StatusOK, t)
	}
}

func (r *Registry) handleDelete(w http.ResponseWriter, req *http.Request) {
	name, aerr := toolName(req)
	if aerr != nil {
		gateway.WriteError(w, req, aerr)
		return
	}
	partner := partnerOf(req)
	existed, err := r.store.Delete(partner, name)
	switch {
	case err != nil:
		gateway.WriteError(w, req, storeUnavailable())
	case !existed:
		gateway.WriteError(w, req, gateway.Errorf(gateway.NotFound, "no tool named %q", name))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

type listBody struct {
	Tools []Tool `json:"tools"`
}

func (r *Registry) handleList(w http.ResponseWriter, req *http.Request) {
	ts, err := r.store.List(partnerOf(req))
	if err != nil {
		gateway.WriteError(w, req, storeUnavailable())
		return
	}
	gateway.WriteJSON(w, http.StatusOK, listBody{Tools: ts})
}

// storeUnavailable is the answer while the store cannot (Redis down).
func storeUnavailable() *gateway.Error {
	return &gateway.Error{Type: gateway.Unavailable, RetryAfter: 1, Message: "the tool store is unavailable; retry"}
}
