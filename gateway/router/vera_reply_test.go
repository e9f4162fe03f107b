package router

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

var testNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// localFill stands for the local catalog: one resource named after the level.
func localFill(l safety.Level) []safety.Resource {
	return []safety.Resource{{ID: "local-" + l.String(), Name: "Local " + l.String(), Actions: []safety.Action{{Type: safety.ActionCall, Value: "112"}}}}
}

func TestParseEngineTime(t *testing.T) {
	want := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) // 1796169600
	for _, tc := range []struct {
		raw  string
		want time.Time
		bad  bool
	}{
		{raw: `"2026-12-02T00:00:00Z"`, want: want},
		{raw: `"2026-12-02T01:00:00+01:00"`, want: want},
		{raw: `"2026-12-02T00:00:00.250Z"`, want: want.Add(250 * time.Millisecond)},
		{raw: `1796169600`, want: want},
		{raw: `1796169600.5`, want: want.Add(500 * time.Millisecond)},
		{raw: `1.7961696e9`, want: want},
		{raw: `"1796169600"`, want: want},
		{raw: `" 1796169600.25 "`, want: want.Add(250 * time.Millisecond)},
		{raw: `null`},
		{raw: ``},
		{raw: `""`},
		{raw: `1796169600000`, bad: true}, // milliseconds: far past year 5138
		{raw: `-5`, bad: true},
		{raw: `0`, bad: true},
		{raw: `"tomorrow"`, bad: true},
		{raw: `"2026-12-02"`, bad: true},
		{raw: `true`, bad: true},
		{raw: `{"s":1}`, bad: true},
		{raw: `[1796169600]`, bad: true},
	} {
		got, err := parseEngineTime(json.RawMessage(tc.raw))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: got %v, want an error", tc.raw, got)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("%s: got %v (%v), want %v UTC", tc.raw, got, err, tc.want)
		}
	}
}

const okSafety = `{"level":"crisis","display_required":true,"resources":[{"id":"us-988","name":"988 Suicide & Crisis Lifeline","actions":[{"type":"call","value":"988"}]}]}`

func TestDecodeVERAReplyTolerant(t *testing.T) {
	expiry := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		body    string
		level   safety.Level
		res     []string // resource ids in order
		actions []string // kept action ids
		expires []time.Time
		defects []string
		noMsg   bool
	}{
		{name: "unix seconds int", body: `{"message":"m","safety":` + okSafety + `,"proposed_actions":[{"id":"a1","type":"call","expires_at":1796169600}]}`,
			level: safety.LevelCrisis, res: []string{"us-988"}, actions: []string{"a1"}, expires: []time.Time{expiry}},
		{name: "unix seconds float and string", body: `{"message":"m","safety":` + okSafety + `,"proposed_actions":[{"id":"a1","type":"t","expires_at":1796169600.0},{"id":"a2","type":"t","expires_at":"1796169600"}]}`,
			level: safety.LevelCrisis, res: []string{"us-988"}, actions: []string{"a1", "a2"}, expires: []time.Time{expiry, expiry}},
		{name: "no expiry is 24h", body: `{"message":"m","proposed_actions":[{"id":"a1","type":"t"}]}`,
			actions: []string{"a1"}, expires: []time.Time{testNow.Add(24 * time.Hour)}},
		{name: "unreadable actions dropped, others kept", body: `{"message":"m","safety":` + okSafety + `,"proposed_actions":[{"type":"t"},{"id":7,"type":"t"},{"id":"a3","type":"t","expires_at":"soon"},"x",{"id":"a5","type":"t","title":5,"input":[1]}]}`,
			level: safety.LevelCrisis, res: []string{"us-988"}, actions: []string{"a5"}, expires: []time.Time{testNow.Add(24 * time.Hour)},
			defects: []string{DefectActionDropped, DefectActionDropped, DefectActionDropped, DefectActionDropped}},
		{name: "actions not a list", body: `{"message":"m","safety":` + okSafety + `,"proposed_actions":{"id":"a1"}}`,
			level: safety.LevelCrisis, res: []string{"us-988"}, defects: []string{DefectActionsUnreadable}},
		{name: "unknown fields and odd id", body: `{"id":12,"created":"yesterday","message":{"role":"assistant","content":"m"},"safety":` + okSafety + `,"extra":{"x":[1]}}`,
			level: safety.LevelCrisis, res: []string{"us-988"}},
		{name: "no safety is none", body: `{"message":"m"}`, level: safety.LevelNone},
		{name: "safety a string", body: `{"message":"m","safety":"crisis"}`,
			level: safety.LevelElevated, res: []string{"local-elevated"}, defects: []string{DefectSafetyUnreadable}},
		{name: "safety level a number", body: `{"message":"m","safety":{"level":2,"display_required":true,"resources":[]}}`,
			level: safety.LevelElevated, res: []string{"local-elevated"}, defects: []string{DefectSafetyUnreadable}},
		{name: "safety without level", body: `{"message":"m","safety":{"display_required":false}}`,
			level: safety.LevelElevated, res: []string{"local-elevated"}, defects: []string{DefectSafetyUnreadable}},
		{name: "level case and space", body: `{"message":"m","safety":{"level":" Elevated ","display_required":false,"resources":[]}}`,
			level: safety.LevelElevated, res: []string{}},
		{name: "display_required a string", body: `{"message":"m","safety":{"level":"elevated","display_required":"yes","resources":[{"id":"r1","name":"R","actions":[]}]}}`,
			level: safety.LevelElevated, res: []string{"r1"}, defects: []string{DefectDisplayUnreadable}},
		{name: "required card without resources", body: `{"message":"m","safety":{"level":"crisis","display_required":true,"resources":[]}}`,
			level: safety.LevelCrisis, res: []string{"local-crisis"}, defects: []string{DefectResourcesFilled}},
		{name: "malformed resource salvaged", body: `{"message":"m","safety":{"level":"crisis","display_required":true,"resources":[{"id":"r1","name":"R","languages":"en","actions":[{"type":"call","value":"988"},{"value":5}]},"Call 116 123"]}}`,
			level: safety.LevelCrisis, res: []string{"r1", ""}, defects: []string{DefectResourceSalvaged, DefectResourceSalvaged}},
		{name: "unreadable resource adds local", body: `{"message":"m","safety":{"level":"none","display_required":false,"resources":[{"id":"r1","name":"R","actions":[]},42]}}`,
			level: safety.LevelElevated, res: []string{"r1", "local-elevated"}, defects: []string{DefectResourceUnreadable}},
		{name: "resources not a list", body: `{"message":"m","safety":{"level":"crisis","display_required":true,"resources":{"id":"r1"}}}`,
			level: safety.LevelCrisis, res: []string{"local-crisis"}, defects: []string{DefectResourceUnreadable}},
		{name: "message unreadable keeps safety", body: `{"message":42,"safety":` + okSafety + `}`,
			level: safety.LevelCrisis, res: []string{"us-988"}, defects: []string{DefectMessageUnreadable}, noMsg: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := decodeVERAReply([]byte(tc.body), testNow, localFill)
			if err != nil {
				t.Fatal(err)
			}
			if rep.MessageOK == tc.noMsg || (!tc.noMsg && rep.Message != "m") {
				t.Fatalf("message %q ok %v", rep.Message, rep.MessageOK)
			}
			a := rep.Safety
			var ids []string
			for _, r := range a.Resources {
				ids = append(ids, r.ID)
			}
			if a.Level != tc.level || strings.Join(ids, ",") != strings.Join(tc.res, ",") || a.Resources == nil || a.Source != safety.SourceEngine {
				t.Fatalf("safety %+v, want level %v resources %v", a, tc.level, tc.res)
			}
			if a.Level >= safety.LevelElevated && len(a.Resources) > 0 && !a.DisplayRequired {
				t.Fatalf("resources to show but display_required false: %+v", a)
			}
			var acts []string
			for i, pa := range rep.Actions {
				acts = append(acts, pa.ID)
				if !pa.ExpiresAt.Equal(tc.expires[i]) {
					t.Fatalf("action %s expires %v, want %v", pa.ID, pa.ExpiresAt, tc.expires[i])
				}
			}
			if strings.Join(acts, ",") != strings.Join(tc.actions, ",") || rep.Actions == nil {
				t.Fatalf("actions %v, want %v", acts, tc.actions)
			}
			if !slices.Equal(rep.Defects, tc.defects) {
				t.Fatalf("defects %v, want %v", rep.Defects, tc.defects)
			}
		})
	}
	if _, err := decodeVERAReply([]byte(`"m"`), testNow, localFill); !errors.Is(err, errReplyNotObject) {
		t.Fatalf("a string body: %v", err)
	}
}

// TestVERAReplyWithUnixExpiryKeepsTurn is the reported failure: an action
// whose expires_at is unix seconds used to turn the whole turn into
// engine_unavailable. Through the real HTTP path the message, the crisis
// safety and the action all arrive, and a dropped action is counted.
func TestVERAReplyWithUnixExpiryKeepsTurn(t *testing.T) {
	f := &fakeVERA{reply: `{"id":"msg_1","message":"I'm here.","safety":` + okSafety + `,
"proposed_actions":[{"id":"act_1","type":"call_contact","expires_at":1796169600},{"id":"act_2","expires_at":1796169600}]}`}
	s, _ := server(t, f.handler(t))
	cfg := textConfig(veraModel("engine", s.URL))
	cfg.Slots[SlotConverse] = []string{"engine"}
	r, _, _ := testRouter(t, cfg, veraEnv)
	reply, err := r.Converse(tctx(t), ConverseRequest{Thread: NewThread("eu_1"), Text: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Message != "I'm here." || reply.Safety.Level != safety.LevelCrisis || len(reply.Safety.Resources) != 1 {
		t.Fatalf("reply %+v", reply)
	}
	if len(reply.ProposedActions) != 1 || !reply.ProposedActions[0].ExpiresAt.Equal(time.Unix(1796169600, 0)) {
		t.Fatalf("actions %+v", reply.ProposedActions)
	}
	if n := metricValue(t, r.metrics.defects.WithLabelValues("engine", DefectActionDropped)); n != 1 {
		t.Fatalf("action_dropped counted %v, want 1", n)
	}
}

// TestVERAUnreadableSafetyIsElevatedWithLocalResources: through the router,
// with the deployment's fallback resources from Options.
func TestVERAUnreadableSafetyIsElevatedWithLocalResources(t *testing.T) {
	f := &fakeVERA{reply: `{"id":"m","message":"ok","safety":{"level":["crisis"]},"proposed_actions":[]}`}
	s, _ := server(t, f.handler(t))
	cfg := textConfig(veraModel("engine", s.URL))
	cfg.Slots[SlotConverse] = []string{"engine"}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	r, err := New(cfg, func(k string) string { return veraEnv[k] }, Options{Clock: newFakeClock(), HTTPClient: client, FallbackResources: localFill})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reply, err := r.Converse(tctx(t), ConverseRequest{Text: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := reply.Safety
	if a.Level != safety.LevelElevated || !a.DisplayRequired || len(a.Resources) != 1 || a.Resources[0].ID != "local-elevated" {
		t.Fatalf("safety %+v", a)
	}
	if n := metricValue(t, r.metrics.defects.WithLabelValues("engine", DefectSafetyUnreadable)); n != 1 {
		t.Fatalf("safety_unreadable counted %v", n)
	}
}

// TestDefaultFallbackNeverEmpty: with no FallbackResources the embedded
// catalog's international resources fill the card.
func TestDefaultFallbackNeverEmpty(t *testing.T) {
	for _, l := range []safety.Level{safety.LevelElevated, safety.LevelCrisis} {
		if rs := defaultFallbackResources(l); len(rs) == 0 {
			t.Fatalf("%v: empty", l)
		}
	}
}

// TestVERASafetyKeptWhenMessageUnreadable: the engine's crisis rides on a
// reply whose message cannot be read; the turn fails over to the next
// model and the crisis is merged into its reply. With no other model, the
// failure still carries it.
func TestVERASafetyKeptWhenMessageUnreadable(t *testing.T) {
	f := &fakeVERA{reply: `{"id":"m","message":{"parts":[1]},"safety":` + okSafety + `}`}
	s, _ := server(t, f.handler(t))
	fallback, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "Fallback ", "reply.") })
	cfg := textConfig(veraModel("engine", s.URL), openAIModel("llm", fallback.URL+"/v1"))
	cfg.Slots[SlotConverse] = []string{"engine", "llm"}
	cfg.Slots["solo"] = []string{"engine"}
	r, _, _ := testRouter(t, cfg, veraEnv)
	reply, err := r.Converse(tctx(t), ConverseRequest{Text: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Model != "llm" || reply.Message != "Fallback reply." {
		t.Fatalf("reply %+v", reply)
	}
	a := reply.Safety
	if a.Level != safety.LevelCrisis || !a.DisplayRequired || len(a.Resources) != 1 || a.Resources[0].ID != "us-988" || a.Source != safety.SourceEngine {
		t.Fatalf("salvaged safety lost: %+v", a)
	}
	_, err = r.Converse(tctx(t), ConverseRequest{Slot: "solo", Text: "hello"}, nil)
	var nm *NoModelError
	if !errors.As(err, &nm) {
		t.Fatalf("got %v", err)
	}
	if a, ok := nm.Safety(); !ok || a.Level != safety.LevelCrisis || len(a.Resources) != 1 {
		t.Fatalf("NoModelError.Safety() = %+v %v", a, ok)
	}
	if n := metricValue(t, r.metrics.defects.WithLabelValues("engine", DefectMessageUnreadable)); n != 2 {
		t.Fatalf("message_unreadable counted %v", n)
	}
}
