package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veraneural/vera-gateway/safety"
)

// classifierServer is a fake moderation or guard server on loopback that
// records what it was sent; answer writes the response for one request.
type classifierServer struct {
	t       testing.TB
	url     string
	done    chan struct{}
	mu      sync.Mutex
	bodies  []map[string]json.RawMessage
	headers []http.Header
	paths   []string
}

func newClassifierServer(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, input string)) *classifierServer {
	cs := &classifierServer{t: t}
	s, done := server(t, func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		cs.mu.Lock()
		cs.bodies = append(cs.bodies, body)
		cs.headers = append(cs.headers, r.Header.Clone())
		cs.paths = append(cs.paths, r.URL.Path)
		cs.mu.Unlock()
		input := ""
		if err := json.Unmarshal(body["input"], &input); err != nil {
			var msgs []guardMessage
			_ = json.Unmarshal(body["messages"], &msgs)
			if len(msgs) > 0 {
				input = msgs[len(msgs)-1].Content
			}
		}
		answer(w, r, input)
	})
	cs.url, cs.done = s.URL+"/v1", done
	return cs
}

func (cs *classifierServer) hits() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.bodies)
}

// block waits until release is closed or the request or test ends.
func (cs *classifierServer) block(r *http.Request, release <-chan struct{}) bool {
	select {
	case <-release:
		return true
	case <-r.Context().Done():
	case <-cs.done:
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// moderationAnswer writes the public moderation shape with these scores
// (a category is flagged when its score is at least 0.5).
func moderationAnswer(w http.ResponseWriter, scores map[string]float64) {
	cats := map[string]bool{}
	for _, c := range []string{"self-harm", "self-harm/intent", "self-harm/instructions", "violence", "violence/graphic", "harassment", "sexual"} {
		cats[c] = scores[c] >= 0.5
		if _, ok := scores[c]; !ok {
			scores[c] = 0.0001
		}
	}
	b, _ := json.Marshal(map[string]any{"id": "modr-1", "model": "omni-moderation-latest",
		"results": []any{map[string]any{"flagged": slices.Contains(slicesValues(cats), true), "categories": cats, "category_scores": scores}}})
	writeJSON(w, http.StatusOK, string(b))
}

func slicesValues(m map[string]bool) []bool {
	var out []bool
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func guardAnswer(w http.ResponseWriter, content string) {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": "llama-guard-3-1b",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	writeJSON(w, http.StatusOK, string(b))
}

func modModel(name, url string) ModelConfig {
	return ModelConfig{Name: name, Provider: ProviderModeration, BaseURL: url, Model: "omni-moderation-latest", APIKeyEnv: "MOD_KEY", TimeoutMs: 1500}
}

func guardModelCfg(name, url string) ModelConfig {
	return ModelConfig{Name: name, Provider: ProviderGuard, BaseURL: url, Model: "llama-guard-3-1b", TimeoutMs: 1500}
}

var modEnv = map[string]string{"MOD_KEY": "sk-mod-test"}

// safetyConfig puts models in the safety slot; listen and converse go to
// an unused HTTP model so the embedded decoders are not loaded.
func safetyConfig(models ...ModelConfig) Config {
	c := DefaultConfig()
	c.Models = append(c.Models, openAIModel("llm", "http://127.0.0.1:9/v1"))
	c.Slots = map[string][]string{SlotListen: {"llm"}, SlotConverse: {"llm"}}
	for _, m := range models {
		c.Models = append(c.Models, m)
		c.Slots[SlotSafety] = append(c.Slots[SlotSafety], m.Name)
	}
	return c
}

func outcomes(t testing.TB, r *Router, model string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, o := range []string{OutcomeOK, OutcomeLate, OutcomeOverBudget, OutcomeTimeout, OutcomeError, OutcomeMalformed, OutcomeBreakerOpen, OutcomeCanceled} {
		if v := metricValue(t, r.metrics.classifier.WithLabelValues(model, o)); v > 0 {
			out[o] = v
		}
	}
	return out
}

func sameCounts(got map[string]float64, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// eventually polls cond; the wall-clock bound is a hang guard only.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	guard := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-guard:
			t.Error("condition never held")
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// finish waits for a classification to end; the bound is a hang guard.
func finish(t testing.TB, c *Classification) Verdict {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("classification did not finish")
	}
	return c.Verdict()
}

func TestModerationLevelsAndPrivacy(t *testing.T) {
	scores := map[string]map[string]float64{
		"i want to end it tonight":       {"self-harm": 0.9, "self-harm/intent": 0.8},
		"how many pills would it take":   {"self-harm/instructions": 0.6, "self-harm/intent": 0.1},
		"the hero fights the dragon":     {"violence": 0.7},
		"he is hitting me right now":     {"violence": 0.95},
		"what a lovely day":              {},
		"i sometimes wish i wasnt here":  {"self-harm": 0.35},
		"i keep thinking about not here": {"self-harm/intent": 0.25},
	}
	cs := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, input string) {
		moderationAnswer(w, scores[input])
	})
	r, _, _ := testRouter(t, safetyConfig(modModel("mod", cs.url)), modEnv)
	for _, tc := range []struct {
		text    string
		level   safety.Level
		reasons string
	}{
		{"i want to end it tonight", safety.LevelCrisis, "mod:self-harm/intent"},
		{"how many pills would it take", safety.LevelElevated, "mod:self-harm/instructions"},
		{"the hero fights the dragon", safety.LevelNone, ""},
		{"he is hitting me right now", safety.LevelElevated, "mod:violence"},
		{"what a lovely day", safety.LevelNone, ""},
		{"i sometimes wish i wasnt here", safety.LevelElevated, "mod:self-harm"},
		{"i keep thinking about not here", safety.LevelElevated, "mod:self-harm/intent"},
	} {
		c := r.StartClassify(tctx(t), tc.text)
		v := finish(t, c)
		if v.Level != tc.level || strings.Join(v.Reasons, ",") != tc.reasons || v.Answered != 1 || v.Pending != 0 || v.Failed != 0 {
			t.Errorf("%q: verdict %+v, want %v %q", tc.text, v, tc.level, tc.reasons)
		}
	}
	// Only the turn's text leaves: exactly {"model","input"}, no ids.
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i, b := range cs.bodies {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range b {
				if !yield(k) {
					return
				}
			}
		})
		if strings.Join(keys, ",") != "input,model" || string(b["model"]) != `"omni-moderation-latest"` {
			t.Fatalf("request %d body keys %v model %s", i, keys, b["model"])
		}
		h := cs.headers[i]
		if cs.paths[i] != "/v1/moderations" || h.Get("Authorization") != "Bearer sk-mod-test" || h.Get("Idempotency-Key") != "" {
			t.Fatalf("request %d: path %s headers %v", i, cs.paths[i], h)
		}
		for k := range h {
			if strings.HasPrefix(strings.ToLower(k), "vera-") || strings.EqualFold(k, "X-Request-Id") {
				t.Fatalf("request %d sends header %s", i, k)
			}
		}
	}
	if got := outcomes(t, r, "mod"); !sameCounts(got, map[string]float64{OutcomeOK: 7}) {
		t.Fatalf("outcomes %v", got)
	}
}

func TestGuardVerdicts(t *testing.T) {
	answers := map[string]string{
		"a": "safe", "b": "\n\nunsafe\nS11", "c": "unsafe\nS1,S11", "d": "unsafe", "e": "unsafe\nS2",
		"f": "I'm sorry, I can't help with that.", "g": "", "h": "UNSAFE S11.",
	}
	cs := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, input string) { guardAnswer(w, answers[input]) })
	m := guardModelCfg("guard", cs.url)
	m.Classifier.Codes = map[string]string{"s1": "elevated"}
	r, _, _ := testRouter(t, safetyConfig(m), nil)
	for _, tc := range []struct {
		in      string
		level   safety.Level
		reasons string
		failed  int
	}{
		{"a", safety.LevelNone, "", 0},
		{"b", safety.LevelCrisis, "guard:S11", 0},
		{"c", safety.LevelCrisis, "guard:S1,guard:S11", 0},
		{"d", safety.LevelElevated, "guard:unsafe", 0},
		{"e", safety.LevelNone, "", 0},
		{"f", safety.LevelNone, "", 1},
		{"g", safety.LevelNone, "", 1},
		{"h", safety.LevelCrisis, "guard:S11", 0},
	} {
		v := finish(t, r.StartClassify(tctx(t), tc.in))
		if v.Level != tc.level || strings.Join(v.Reasons, ",") != tc.reasons || v.Failed != tc.failed {
			t.Errorf("%q (%q): verdict %+v, want %v %q failed %d", tc.in, answers[tc.in], v, tc.level, tc.reasons, tc.failed)
		}
	}
	cs.mu.Lock()
	b := cs.bodies[0]
	cs.mu.Unlock()
	var msgs []map[string]any
	if err := json.Unmarshal(b["messages"], &msgs); err != nil || len(msgs) != 1 || msgs[0]["role"] != "user" || msgs[0]["content"] != "a" || len(msgs[0]) != 2 {
		t.Fatalf("guard messages %s", b["messages"])
	}
	if _, ok := b["user"]; ok || string(b["stream"]) != "false" || string(b["model"]) != `"llama-guard-3-1b"` {
		t.Fatalf("guard body %v", b)
	}
	if got := outcomes(t, r, "guard"); !sameCounts(got, map[string]float64{OutcomeOK: 6, OutcomeMalformed: 2}) {
		t.Fatalf("outcomes %v", got)
	}
}

// TestClassifierFaultsNeverLowerTheLevel: each fault is counted, adds
// nothing, and the healthy classifier's crisis stands.
func TestClassifierFaultsNeverLowerTheLevel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		guard   bool
		answer  func(w http.ResponseWriter)
		outcome string
	}{
		{"500", false, func(w http.ResponseWriter) { writeJSON(w, 500, `{"error":{"message":"boom"}}`) }, OutcomeError},
		{"503", true, func(w http.ResponseWriter) { writeJSON(w, 503, `{}`) }, OutcomeError},
		{"429", false, func(w http.ResponseWriter) { w.Header().Set("Retry-After", "1"); writeJSON(w, 429, `{}`) }, OutcomeError},
		{"not json", false, func(w http.ResponseWriter) { writeJSON(w, 200, `{"results":[{"categories":`) }, OutcomeMalformed},
		{"html", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>oops</html>")
		}, OutcomeMalformed},
		{"results an object", false, func(w http.ResponseWriter) { writeJSON(w, 200, `{"results":{"categories":{}}}`) }, OutcomeMalformed},
		{"scores as strings", false, func(w http.ResponseWriter) {
			writeJSON(w, 200, `{"results":[{"category_scores":{"self-harm":"0.9"}}]}`)
		}, OutcomeMalformed},
		{"no results", false, func(w http.ResponseWriter) { writeJSON(w, 200, `{"results":[]}`) }, OutcomeMalformed},
		{"no categories", false, func(w http.ResponseWriter) { writeJSON(w, 200, `{"results":[{"flagged":true}]}`) }, OutcomeMalformed},
		{"guard no choices", true, func(w http.ResponseWriter) { writeJSON(w, 200, `{"choices":[]}`) }, OutcomeMalformed},
		{"guard content null", true, func(w http.ResponseWriter) { writeJSON(w, 200, `{"choices":[{"message":{"content":null}}]}`) }, OutcomeMalformed},
		{"guard chat prose", true, func(w http.ResponseWriter) { guardAnswer(w, "Sure! Here is a poem.") }, OutcomeMalformed},
		{"oversized", false, func(w http.ResponseWriter) {
			writeJSON(w, 200, `{"results":[{"category_scores":{"x":"`+strings.Repeat("a", maxClassifierBody)+`"}}]}`)
		}, OutcomeMalformed},
		{"reset", false, func(w http.ResponseWriter) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { tc.answer(w) })
			good := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				moderationAnswer(w, map[string]float64{"self-harm/intent": 0.9})
			})
			badCfg := modModel("bad", bad.url)
			if tc.guard {
				badCfg = guardModelCfg("bad", bad.url)
			}
			r, _, _ := testRouter(t, safetyConfig(badCfg, modModel("good", good.url)), modEnv)
			v := finish(t, r.StartClassify(tctx(t), "i am going to do it tonight"))
			if v.Level != safety.LevelCrisis || v.Answered != 1 || v.Failed != 1 || strings.Join(v.Reasons, ",") != "good:self-harm/intent" {
				t.Fatalf("verdict %+v", v)
			}
			if got := outcomes(t, r, "bad"); !sameCounts(got, map[string]float64{tc.outcome: 1}) {
				t.Fatalf("bad outcomes %v, want %s", got, tc.outcome)
			}
			if bad.hits() != 1 {
				t.Fatalf("faulty classifier called %d times: no retries within a turn", bad.hits())
			}
		})
	}
}

func TestClassifyFanOutHighestWins(t *testing.T) {
	mod := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		moderationAnswer(w, map[string]float64{"self-harm": 0.6})
	})
	quiet := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { moderationAnswer(w, map[string]float64{}) })
	grd := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { guardAnswer(w, "unsafe\nS11") })
	r, _, _ := testRouter(t, safetyConfig(modModel("mod", mod.url), modModel("quiet", quiet.url), guardModelCfg("guard", grd.url)), modEnv)
	v := finish(t, r.StartClassify(tctx(t), "text"))
	if v.Level != safety.LevelCrisis || strings.Join(v.Reasons, ",") != "guard:S11,mod:self-harm" || v.Answered != 3 {
		t.Fatalf("verdict %+v", v)
	}
	for _, cs := range []*classifierServer{mod, quiet, grd} {
		if cs.hits() != 1 {
			t.Fatalf("every model of the safety slot runs once, got %d", cs.hits())
		}
	}
}

// TestClassifyBudgetAndLateDetection: Wait returns when the budget passes
// on the router's clock with the slow classifier still pending; its crisis
// then arrives late, raises the verdict, closes Reached(crisis) and is
// counted late.
func TestClassifyBudgetAndLateDetection(t *testing.T) {
	release := make(chan struct{})
	fast := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { moderationAnswer(w, map[string]float64{}) })
	var slow *classifierServer
	slow = newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if slow.block(r, release) {
			guardAnswer(w, "unsafe\nS11")
		}
	})
	r, clk, _ := testRouter(t, safetyConfig(modModel("fast", fast.url), guardModelCfg("slow", slow.url)), modEnv)
	c := r.StartClassify(tctx(t), "text")
	defer c.Stop()
	// The fast one answers first, so only the budget can end Wait.
	eventually(t, func() bool { return c.Verdict().Answered == 1 })
	got := make(chan Verdict, 1)
	go func() { got <- c.Wait(DefaultClassifyBudget) }()
	waitTimer(t, clk, func(d time.Duration) bool { return d == DefaultClassifyBudget })
	select {
	case v := <-got:
		t.Fatalf("Wait returned %+v before the budget passed", v)
	default:
	}
	clk.Advance(DefaultClassifyBudget)
	v := <-got
	if v.Level != safety.LevelNone || v.Pending != 1 || v.Answered != 1 {
		t.Fatalf("verdict at the budget %+v", v)
	}
	select {
	case <-c.Reached(safety.LevelElevated):
		t.Fatal("Reached(elevated) closed before any classifier said so")
	default:
	}
	close(release)
	select {
	case <-c.Reached(safety.LevelCrisis):
	case <-time.After(10 * time.Second):
		t.Fatal("late crisis never reached")
	}
	<-c.Reached(safety.LevelElevated)
	v = finish(t, c)
	if v.Level != safety.LevelCrisis || v.Pending != 0 || v.Answered != 2 || strings.Join(v.Reasons, ",") != "slow:S11" {
		t.Fatalf("final verdict %+v", v)
	}
	if got := outcomes(t, r, "slow"); !sameCounts(got, map[string]float64{OutcomeLate: 1}) {
		t.Fatalf("slow outcomes %v", got)
	}
	if got := outcomes(t, r, "fast"); !sameCounts(got, map[string]float64{OutcomeOK: 1}) {
		t.Fatalf("fast outcomes %v", got)
	}
}

// TestClassifyStopsAtBudget: the synchronous Classify returns at the
// budget and stops the straggler, counted over_budget.
func TestClassifyStopsAtBudget(t *testing.T) {
	var slow *classifierServer
	slow = newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if slow.block(r, nil) {
			guardAnswer(w, "safe")
		}
	})
	r, clk, _ := testRouter(t, safetyConfig(guardModelCfg("slow", slow.url)), nil)
	type res struct {
		v   Verdict
		err error
	}
	got := make(chan res, 1)
	go func() {
		v, err := r.Classify(tctx(t), "text", 250*time.Millisecond)
		got <- res{v, err}
	}()
	waitTimer(t, clk, func(d time.Duration) bool { return d == 250*time.Millisecond })
	clk.Advance(250 * time.Millisecond)
	out := <-got
	if out.err != nil || out.v.Level != safety.LevelNone || out.v.Pending != 1 {
		t.Fatalf("Classify %+v %v", out.v, out.err)
	}
	if got := outcomes(t, r, "slow"); !sameCounts(got, map[string]float64{OutcomeOverBudget: 1}) {
		t.Fatalf("outcomes %v", got)
	}
}

// TestClassifyCrisisEndsWaitEarly: nothing can raise a crisis, so Wait
// does not sit out the budget for the slow one.
func TestClassifyCrisisEndsWaitEarly(t *testing.T) {
	fast := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		moderationAnswer(w, map[string]float64{"self-harm/intent": 0.99})
	})
	var slow *classifierServer
	slow = newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { slow.block(r, nil) })
	r, _, _ := testRouter(t, safetyConfig(modModel("fast", fast.url), guardModelCfg("slow", slow.url)), modEnv)
	c := r.StartClassify(tctx(t), "text")
	v := c.Wait(time.Hour) // the fake clock never moves: only the crisis can end this
	if v.Level != safety.LevelCrisis || v.Pending != 1 {
		t.Fatalf("verdict %+v", v)
	}
	c.Stop()
	c.Stop() // idempotent
	if got := outcomes(t, r, "slow"); !sameCounts(got, map[string]float64{OutcomeCanceled: 1}) {
		t.Fatalf("slow outcomes %v", got)
	}
}

// TestClassifierTimeoutAndBreaker: timeout_ms on the router's clock ends a
// silent classifier (timeout); with breaker.failures 1 the next turn skips
// it without a request (breaker_open).
func TestClassifierTimeoutAndBreaker(t *testing.T) {
	var slow *classifierServer
	slow = newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { slow.block(r, nil) })
	cfg := safetyConfig(guardModelCfg("slow", slow.url))
	cfg.Breaker.Failures = 1
	r, clk, _ := testRouter(t, cfg, nil)
	c := r.StartClassify(tctx(t), "text")
	waitTimer(t, clk, func(d time.Duration) bool { return d == 1500*time.Millisecond })
	eventually(t, func() bool { return slow.hits() == 1 })
	clk.Advance(1500 * time.Millisecond)
	if v := finish(t, c); v.Level != safety.LevelNone || v.Failed != 1 {
		t.Fatalf("verdict %+v", v)
	}
	v := finish(t, r.StartClassify(tctx(t), "text"))
	if v.Failed != 1 || slow.hits() != 1 {
		t.Fatalf("verdict %+v hits %d", v, slow.hits())
	}
	if got := outcomes(t, r, "slow"); !sameCounts(got, map[string]float64{OutcomeTimeout: 1, OutcomeBreakerOpen: 1}) {
		t.Fatalf("outcomes %v", got)
	}
}

func TestClassifyContextCanceled(t *testing.T) {
	var slow *classifierServer
	slow = newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { slow.block(r, nil) })
	r, _, _ := testRouter(t, safetyConfig(modModel("slow", slow.url)), modEnv)
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("turn interrupted")
	go func() {
		eventually(t, func() bool { return slow.hits() == 1 })
		cancel(why)
	}()
	v, err := r.Classify(ctx, "text", time.Hour)
	if !errors.Is(err, why) || v.Level != safety.LevelNone {
		t.Fatalf("Classify %+v %v", v, err)
	}
	if got := outcomes(t, r, "slow"); !sameCounts(got, map[string]float64{OutcomeCanceled: 1}) {
		t.Fatalf("outcomes %v", got)
	}
}

// TestClassifyWithoutSafetySlotIsFree: no slot, no work: a finished
// classification, no allocation, no goroutine.
func TestClassifyWithoutSafetySlotIsFree(t *testing.T) {
	r, _, _ := testRouter(t, safetyConfig(), nil)
	ctx := tctx(t)
	v, err := r.Classify(ctx, "i want to die", DefaultClassifyBudget)
	if err != nil || v.Level != safety.LevelNone || v.Answered+v.Pending+v.Failed != 0 {
		t.Fatalf("Classify %+v %v", v, err)
	}
	c := r.StartClassify(ctx, "text")
	select {
	case <-c.Done():
	default:
		t.Fatal("idle classification not done")
	}
	select {
	case <-c.Reached(safety.LevelElevated):
		t.Fatal("idle classification reached elevated")
	case <-c.Reached(safety.LevelNone):
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = r.Classify(ctx, "text", DefaultClassifyBudget) }); n != 0 {
		t.Fatalf("Classify without a safety slot allocates %v times", n)
	}
	// Blank text is not sent even when a slot exists.
	cs := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { moderationAnswer(w, map[string]float64{}) })
	r2, _, _ := testRouter(t, safetyConfig(modModel("mod", cs.url)), modEnv)
	if v, err := r2.Classify(ctx, "  \n", DefaultClassifyBudget); err != nil || v.Level != safety.LevelNone || cs.hits() != 0 {
		t.Fatalf("blank text: %+v %v, %d requests", v, err, cs.hits())
	}
}

func TestSafetySlotServesOnlyClassify(t *testing.T) {
	cs := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { moderationAnswer(w, map[string]float64{}) })
	r, _, _ := testRouter(t, safetyConfig(modModel("mod", cs.url)), modEnv)
	if _, err := r.Converse(tctx(t), ConverseRequest{Slot: SlotSafety, Text: "hi"}, nil); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("Converse on the safety slot: %v", err)
	}
	if _, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSafety, Messages: []Message{{Role: RoleUser, Text: "hi"}}}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("Oneshot on the safety slot: %v", err)
	}
	if got := r.Slots()[SlotSafety]; len(got) != 1 || got[0] != "mod" {
		t.Fatalf("Slots() safety = %v", got)
	}
	if cs.hits() != 0 {
		t.Fatal("classifier called for a converse or oneshot")
	}
}

func TestSafetyConfigValidation(t *testing.T) {
	mod := modModel("mod", "https://api.example/v1")
	grd := guardModelCfg("guard", "http://127.0.0.1:8000/v1")
	llm := openAIModel("llm", "http://127.0.0.1:9/v1")
	with := func(f func(c *Config)) Config {
		c := DefaultConfig()
		c.Models = []ModelConfig{llm, mod, grd}
		c.Slots = map[string][]string{SlotListen: {"llm"}, SlotSafety: {"mod", "guard"}}
		f(&c)
		return c
	}
	if err := with(func(*Config) {}).Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown provider", with(func(c *Config) { c.Models[1].Provider = "moderation" }), `router.models[1].provider: unknown provider "moderation"`},
		{"failover provider in safety", with(func(c *Config) { c.Slots[SlotSafety] = []string{"llm"} }), `router.slots.safety[0]: model "llm" (provider openai) cannot serve slot "safety" (the safety slot takes classifier providers`},
		{"embedded companion in safety", with(func(c *Config) { c.Slots[SlotSafety] = []string{EmbeddedConverse} }), `cannot serve slot "safety"`},
		{"classifier in converse", with(func(c *Config) { c.Slots[SlotConverse] = []string{"mod"} }), `router.slots.converse[0]: model "mod" (provider openai-moderation) cannot serve slot "converse" (classifier providers serve only the safety slot)`},
		{"classifier in a custom slot", with(func(c *Config) { c.Slots["titles"] = []string{"guard"} }), `router.slots.titles[0]: model "guard" (provider guard) cannot serve slot "titles"`},
		{"empty safety slot", with(func(c *Config) { c.Slots[SlotSafety] = []string{} }), `router.slots.safety: empty slot`},
		{"unknown model in safety", with(func(c *Config) { c.Slots[SlotSafety] = []string{"nope"} }), `router.slots.safety[0]: unknown model "nope"`},
		{"twice in safety", with(func(c *Config) { c.Slots[SlotSafety] = []string{"mod", "mod"} }), `router.slots.safety[1]: model "mod" listed twice`},
		{"no base_url", with(func(c *Config) { c.Models[1].BaseURL = "" }), `router.models[1].base_url: must be set for provider openai-moderation`},
		{"bad base_url", with(func(c *Config) { c.Models[2].BaseURL = "ftp://x" }), `router.models[2].base_url: must be an http(s) URL`},
		{"no model", with(func(c *Config) { c.Models[2].Model = "" }), `router.models[2].model: must be set for provider guard`},
		{"zero threshold", with(func(c *Config) { c.Models[1].Classifier.Crisis = map[string]float64{"self-harm": 0} }), `router.models[1].classifier.crisis["self-harm"]: must be a score > 0`},
		{"negative threshold", with(func(c *Config) { c.Models[1].Classifier.Elevated = map[string]float64{"violence": -1} }), `classifier.elevated["violence"]: must be a score > 0`},
		{"thresholds on guard", with(func(c *Config) { c.Models[2].Classifier.Crisis = map[string]float64{"S11": 0.5} }), `router.models[2].classifier: crisis/elevated thresholds are for provider openai-moderation`},
		{"codes on moderation", with(func(c *Config) { c.Models[1].Classifier.Codes = map[string]string{"S11": "crisis"} }), `router.models[1].classifier.codes: for provider guard`},
		{"bad code level", with(func(c *Config) { c.Models[2].Classifier.Codes = map[string]string{"S11": "high"} }), `router.models[2].classifier.codes["S11"]: must be crisis, elevated or none`},
		{"codes on openai", with(func(c *Config) { c.Models[0].Classifier.Codes = map[string]string{"S11": "crisis"} }), `router.models[0].classifier.codes: for provider guard, not "openai"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestClassifierConfigFromYAML: the YAML shape decodes strictly,
// and configured thresholds and codes replace the defaults key by key.
func TestClassifierConfigFromYAML(t *testing.T) {
	mod := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		moderationAnswer(w, map[string]float64{"violence": 0.95, "self-harm": 0.4})
	})
	grd := newClassifierServer(t, func(w http.ResponseWriter, r *http.Request, _ string) { guardAnswer(w, "unsafe\nS11,S10") })
	section := fmt.Sprintf(`
models:
  - {name: llm, provider: openai, base_url: "http://127.0.0.1:9/v1", model: m}
  - {name: mod, provider: openai-moderation, base_url: %q, model: omni-moderation-latest, api_key_env: MOD_KEY, timeout_ms: 1500,
     classifier: {elevated: {violence: 1.5, self-harm: 0.35}}}
  - {name: guard, provider: guard, base_url: %q, model: llama-guard-2-8b, timeout_ms: 1500,
     classifier: {codes: {S10: crisis, S11: none}}}
slots:
  listen: [llm]
  safety: [mod, guard]
`, mod.url, grd.url)
	c := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(section))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	r, _, _ := testRouter(t, c, modEnv)
	v := finish(t, r.StartClassify(tctx(t), "text"))
	// violence turned off (1.5 > any score); self-harm 0.4 over 0.35;
	// Llama Guard 2's S10 is self-harm, its S11 is not.
	if v.Level != safety.LevelCrisis || strings.Join(v.Reasons, ",") != "guard:S10,mod:self-harm" {
		t.Fatalf("verdict %+v", v)
	}
}
