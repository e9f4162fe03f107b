package router

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// approveEngine is the Partner API's approve endpoint: it records every
// request and answers with status(n) for the n-th (1-based).
type approveEngine struct {
	mu     sync.Mutex
	keys   []string
	paths  []string
	auth   []string
	vers   []string
	bodies []string
	status func(n int) int
}

func (e *approveEngine) handler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.keys = append(e.keys, r.Header.Get("Idempotency-Key"))
	e.paths = append(e.paths, r.Method+" "+r.URL.EscapedPath())
	e.auth = append(e.auth, r.Header.Get("Authorization"))
	e.vers = append(e.vers, r.Header.Get("VERA-Version"))
	e.bodies = append(e.bodies, string(b))
	n := len(e.keys)
	e.mu.Unlock()
	st := e.status(n)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	if st/100 == 2 {
		fmt.Fprint(w, `{"id":"act_9","status":"approved"}`)
		return
	}
	typ := "engine_unavailable"
	if st == http.StatusNotFound {
		typ = "not_found"
	}
	fmt.Fprintf(w, `{"error":{"type":%q,"message":"status %d","request_id":"req_%d"}}`, typ, st, n)
}

func (e *approveEngine) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.keys)
}

// TestVERAApproveRetriesAfter503WithOneKey: a 503 is retried after the
// router's backoff with the same Idempotency-Key, Bearer key and version;
// approving the same action again reuses that key, so the engine can
// recognise it.
func TestVERAApproveRetriesAfter503WithOneKey(t *testing.T) {
	e := &approveEngine{status: func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}}
	s, _ := server(t, e.handler)
	r, clk, _ := testRouter(t, textConfig(veraModel("engine", s.URL)), veraEnv)
	res := make(chan error, 1)
	go func() { res <- r.ApproveAction(tctx(t), "engine", "act_9") }()
	clk.Advance(waitTimer(t, clk, sleepTimer))
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if err := r.ApproveAction(tctx(t), "engine", "act_9"); err != nil {
		t.Fatal(err)
	}
	if e.count() != 3 {
		t.Fatalf("%d requests, want 3 (503, retry, second approve)", e.count())
	}
	for i := range 3 {
		if e.paths[i] != "POST /v1/actions/act_9/approve" || e.auth[i] != "Bearer vera_sk_test" || e.vers[i] != VERAVersion || e.bodies[i] != "{}" {
			t.Errorf("request %d: %s auth=%q version=%q body=%q", i, e.paths[i], e.auth[i], e.vers[i], e.bodies[i])
		}
		if e.keys[i] != e.keys[0] || e.keys[i] == "" {
			t.Errorf("idempotency keys %q: want one key for the action", e.keys)
		}
	}
	if e.keys[0] != "approve-act_9-engine" {
		t.Errorf("key %q is not derived from the action id", e.keys[0])
	}
}

// TestVERAApproveRefusedFailsOnce: a 4xx is not retried; the error names
// the engine's message and request id.
func TestVERAApproveRefusedFailsOnce(t *testing.T) {
	e := &approveEngine{status: func(int) int { return http.StatusNotFound }}
	s, _ := server(t, e.handler)
	r, _, _ := testRouter(t, textConfig(veraModel("engine", s.URL)), veraEnv)
	err := r.ApproveAction(tctx(t), "engine", "act/../x")
	if got := attemptSummary(err); got != "engine:rejected" {
		t.Fatalf("attempts %s (%v)", got, err)
	}
	var nm *NoModelError
	if !errors.As(err, &nm) || !errors.Is(err, ErrNoModel) {
		t.Fatalf("%v is not a NoModelError", err)
	}
	if e.count() != 1 || e.paths[0] != "POST /v1/actions/act%2F..%2Fx/approve" {
		t.Fatalf("requests %q: one, with the id escaped", e.paths)
	}
}

// TestVERAApproveOnlyEngines: only a vera model approves; a blank id is a
// bad request and nothing is sent.
func TestVERAApproveOnlyEngines(t *testing.T) {
	e := &approveEngine{status: func(int) int { return http.StatusOK }}
	s, _ := server(t, e.handler)
	cfg := textConfig(veraModel("engine", s.URL), openAIModel("chat", s.URL))
	r, _, _ := testRouter(t, cfg, veraEnv)
	for _, c := range []struct {
		model, id string
		want      error
	}{
		{"chat", "act_1", ErrNotEngine},
		{"nope", "act_1", ErrNotEngine},
		{"engine", "  ", ErrBadRequest},
	} {
		if err := r.ApproveAction(tctx(t), c.model, c.id); !errors.Is(err, c.want) {
			t.Errorf("ApproveAction(%q, %q) = %v, want %v", c.model, c.id, err, c.want)
		}
	}
	if e.count() != 0 {
		t.Fatalf("%d requests sent", e.count())
	}
}
