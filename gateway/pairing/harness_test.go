package pairing_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/pairing"
)

const (
	keyA   = "vera_sk_test_partner_a_0123456789"
	keyB   = "vera_sk_test_partner_b_0123456789"
	device = "meta-rayban-display"
)

// harness is the real gateway server (keys, scopes, idempotency, error
// envelope) with the pairing routes mounted, on a fake clock.
type harness struct {
	t     *testing.T
	clock *clocktest.Clock
	srv   *gateway.Server
	svc   *pairing.Service
	reg   *prometheus.Registry
}

func newHarness(t *testing.T, store pairing.Store, cfg pairing.Config) *harness {
	t.Helper()
	return newNode(t, store, cfg, nil, pairing.Options{})
}

// newNode is a harness on clock (nil: its own) with the codes and rate
// limiter of opts: several of them on one Redis are a cluster's nodes.
func newNode(t *testing.T, store pairing.Store, cfg pairing.Config, clock *clocktest.Clock, opts pairing.Options) *harness {
	t.Helper()
	if clock == nil {
		clock = clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	}
	h := &harness{t: t, clock: clock, reg: prometheus.NewRegistry()}
	gcfg := gateway.DefaultConfig()
	gcfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: keyA, Scopes: gateway.AllScopes},
		{ID: "partner-b", Secret: keyB, Scopes: gateway.AllScopes},
	}
	srv, err := gateway.New(gcfg, gateway.Options{Clock: h.clock, Registry: h.reg,
		ValidateDevice: knownDevice})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	opts.Tokens, opts.TokenTTL, opts.ValidateDevice, opts.Clock, opts.Registerer = srv.Tokens(), time.Minute, knownDevice, h.clock, h.reg
	h.svc, err = pairing.New(cfg, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range h.svc.Routes() {
		srv.Mount(rt)
	}
	return h
}

func knownDevice(id string) error {
	switch id {
	case "meta-rayban-display", "browser", "phone", "even-g2":
		return nil
	}
	return errors.New("unknown device profile")
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (r reply) str(k string) string { s, _ := r.body[k].(string); return s }

func (r reply) errType() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func (r reply) errMsg() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// do sends one request from remote ("" = 192.0.2.1) with key as Bearer
// ("" = none).
func (h *harness) do(method, path, key, body, remote string) reply {
	h.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if remote != "" {
		req.RemoteAddr = remote
	}
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, header: res.Header}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r.body); err != nil {
			h.t.Fatalf("%s %s: %d, not JSON: %q", method, path, res.StatusCode, b)
		}
	}
	return r
}

// code asks for a pairing code as partner key for endUser.
func (h *harness) code(key, endUser, dev string) reply {
	h.t.Helper()
	r := h.do("POST", "/v1/pairings", key, `{"end_user_id":"`+endUser+`","device":"`+dev+`"}`, "")
	if r.status != http.StatusCreated {
		h.t.Fatalf("POST /v1/pairings: %d %v", r.status, r.body)
	}
	return r
}

func (h *harness) exchange(code, dev, remote string) reply {
	h.t.Helper()
	return h.do("POST", "/v1/pairings/exchange", "", `{"code":"`+code+`","device":"`+dev+`"}`, remote)
}

func (h *harness) refresh(rt, dev string) reply {
	h.t.Helper()
	return h.do("POST", "/v1/pairings/refresh", "", `{"refresh_token":"`+rt+`","device":"`+dev+`"}`, "")
}

// claims verifies a client token with the gateway's own issuer.
func (h *harness) claims(tok string) *gateway.ClientTokenClaims {
	h.t.Helper()
	c, err := h.srv.Tokens().Verify(tok)
	if err != nil {
		h.t.Fatalf("token does not verify: %v", err)
	}
	return c
}

func (h *harness) counter(name, outcome string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
			if outcome == "" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
