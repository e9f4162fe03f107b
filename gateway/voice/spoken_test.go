package voice

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
)

// heldModeration is a loopback moderation server (the public response
// shape) that holds every request until release is closed, then says
// self-harm/intent: a classifier whose crisis arrives when the test says.
func heldModeration(t *testing.T, release <-chan struct{}) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":true,
"categories":{"self-harm":true,"self-harm/intent":true,"self-harm/instructions":false,"violence":false},
"category_scores":{"self-harm":0.91,"self-harm/intent":0.97,"self-harm/instructions":0.001,"violence":0.002}}]}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// classifiedStack is a voice stack whose router has a safety slot on mod.
func classifiedStack(t *testing.T, mod string, budget time.Duration) *stack {
	t.Helper()
	rc := router.DefaultConfig()
	rc.Models = append(rc.Models, router.ModelConfig{Name: "mod", Provider: router.ProviderModeration, BaseURL: mod + "/v1",
		Model: "omni-moderation-latest", APIKeyEnv: "MOD_KEY", TimeoutMs: 60000})
	rc.Slots = map[string][]string{router.SlotSafety: {"mod"}}
	return newStack(t, stackOptions{routerCfg: &rc, env: map[string]string{"MOD_KEY": "sk-mod"}, classifyBudget: budget})
}

func dial(t *testing.T, ctx context.Context, st *stack, device string) *player {
	t.Helper()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: device})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	})
	return &player{Client: c}
}

func waitFor(t *testing.T, ctx context.Context, c *player, what string, pred func(e fixtures.Event, p payload) bool) fixtures.Event {
	t.Helper()
	e, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return pred(e, decode(t, e)) })
	if err != nil {
		t.Fatalf("%s never came: %v\n%s", what, err, dumpEvents(c.Events()))
	}
	return e
}

func countWhere(t *testing.T, evs []fixtures.Event, pred func(e fixtures.Event, p payload) bool) int {
	n := 0
	for _, e := range evs {
		if pred(e, decode(t, e)) {
			n++
		}
	}
	return n
}

// TestLateClassifierCrisisMidReply: the local detector hears nothing in
// "I would like to go home"; the classifier's crisis comes while the reply
// is playing, after the budget. The card goes out at once (on the
// glasses' display), the reply's speech stops and is reported
// interrupted (reason safety, heard a proper prefix of the reply), and the
// resources are spoken once — not again when the unacknowledged card is
// re-sent.
func TestLateClassifierCrisisMidReply(t *testing.T) {
	release := make(chan struct{})
	st := classifiedStack(t, heldModeration(t, release).URL, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c := dial(t, ctx, st, "meta-rayban-display")
	c.play(t, ctx, concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second)))
	turnID := decode(t, waitFor(t, ctx, c, "transcript", func(e fixtures.Event, _ payload) bool { return e.Type == "transcript.final" })).TurnID
	waitFor(t, ctx, c, "reply audio", func(e fixtures.Event, p payload) bool { return e.Type == "reply.audio_started" && p.TurnID == turnID })
	close(release) // the classifier answers now, mid-reply
	card := waitFor(t, ctx, c, "late card", func(e fixtures.Event, p payload) bool { return e.Type == "safety.card" })
	cp := decode(t, card)
	ie := waitFor(t, ctx, c, "reply.interrupted", func(e fixtures.Event, p payload) bool { return e.Type == "reply.interrupted" })
	spokenTurn := "safety:" + cp.CardID
	waitFor(t, ctx, c, "spoken resources", func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_stopped" && p.TurnID == spokenTurn
	})
	// Two re-sends of the unacknowledged card later, nothing more is spoken.
	waitFor(t, ctx, c, "second re-send", func(e fixtures.Event, p payload) bool {
		return e.Type == "safety.card" && strings.Contains(string(e.Data), `"resend":2`)
	})
	evs := c.Events()
	if testing.Verbose() {
		t.Logf("events:\n%s", dumpEvents(evs))
	}

	if cp.TurnID != turnID || cp.Level != "crisis" {
		t.Fatalf("late card %s", card.Data)
	}
	var sc struct {
		Surfaces []struct {
			Surface string            `json:"surface"`
			Pages   []json.RawMessage `json:"pages"`
		} `json:"surfaces"`
	}
	_ = json.Unmarshal(card.Data, &sc)
	if len(sc.Surfaces) != 1 || sc.Surfaces[0].Surface != "display" || len(sc.Surfaces[0].Pages) == 0 {
		t.Errorf("the late card is not laid out for the display: %s", card.Data)
	}
	for _, e := range ofType(evs, "reply.delta") {
		if decode(t, e).TurnID == turnID && e.Seq > card.Seq {
			t.Errorf("reply text after the late card (seq %d > %d)", e.Seq, card.Seq)
		}
	}
	ip := decode(t, ie)
	full := replyText(t, evs, turnID)
	if ip.TurnID != turnID || ip.Reason != "safety" || !strings.HasPrefix(full, ip.Heard) || len(ip.Heard) >= len(full) {
		t.Errorf("reply.interrupted %s: want turn %s, reason safety, heard a proper prefix of %q", ie.Data, turnID, full)
	}
	if n := countWhere(t, evs, func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_started" && p.TurnID == spokenTurn
	}); n != 1 {
		t.Errorf("resources spoken %d times, want once\n%s", n, dumpEvents(evs))
	}
	if n := len(ofType(evs, "display.clear")); n != 0 {
		t.Errorf("the card was cleared from the display")
	}
	if got := st.counters.Snapshot().Totals["spoken"]; got != 1 {
		t.Errorf("spoken counter %d, want 1", got)
	}
	// The reply's audio stopped when the card came, before the resources.
	var stopped, started time.Time
	for _, e := range evs {
		p := decode(t, e)
		switch {
		case e.Type == "reply.audio_stopped" && p.TurnID == turnID && stopped.IsZero():
			stopped = e.At
		case e.Type == "reply.audio_started" && p.TurnID == spokenTurn:
			started = e.At
		}
	}
	if stopped.IsZero() || stopped.Before(card.At) || started.Before(stopped) {
		t.Errorf("reply audio stopped %v, card %v, resources started %v", stopped, card.At, started)
	}
}

// crisisCall says the crisis sentence on a new connection of device and
// returns the turn id once its card has come.
func crisisCall(t *testing.T, ctx context.Context, st *stack, device string) (*player, string, payload) {
	t.Helper()
	c := dial(t, ctx, st, device)
	c.play(t, ctx, concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "crisis_kill.16k.wav"), fixtures.Silence(16000, time.Second)))
	final := waitFor(t, ctx, c, "transcript", func(e fixtures.Event, _ payload) bool { return e.Type == "transcript.final" })
	turnID := decode(t, final).TurnID
	card, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "safety.card" || (e.Type == "reply.done" && decode(t, e).TurnID == turnID)
	})
	if err != nil || card.Type != "safety.card" {
		t.Fatalf("no card for the crisis sentence (heard %q): %v\n%s", decode(t, final).Text, err, dumpEvents(c.Events()))
	}
	return c, turnID, decode(t, card)
}

// TestSpokenResourcesOnAScreenCanBeTalkedOver: on the glasses an
// unacknowledged card is spoken once as a whole, and the person can talk
// over it: playout pauses and their words stop it; the card stays on the
// display, the next turn is answered, and the resources are not spoken
// again by the later re-sends.
func TestSpokenResourcesOnAScreenCanBeTalkedOver(t *testing.T) {
	st := newStack(t, stackOptions{freshRouter: true})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c, turnID, card := crisisCall(t, ctx, st, "meta-rayban-display")
	spokenTurn := "safety:" + card.CardID
	waitFor(t, ctx, c, "spoken resources", func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_started" && p.TurnID == spokenTurn
	})
	c.play(t, ctx, concat(t, fixtures.Silence(16000, time.Second), fixture(t, "barge.16k.wav"), fixtures.Silence(16000, time.Second)))
	stopped := waitFor(t, ctx, c, "spoken resources stopped", func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_stopped" && p.TurnID == spokenTurn
	})
	next := waitFor(t, ctx, c, "the words said over it", func(e fixtures.Event, p payload) bool {
		return e.Type == "transcript.final" && p.TurnID != turnID
	})
	nextID := decode(t, next).TurnID
	waitFor(t, ctx, c, "the next reply", func(e fixtures.Event, p payload) bool { return e.Type == "reply.done" && p.TurnID == nextID })
	waitFor(t, ctx, c, "the last re-send", func(e fixtures.Event, p payload) bool {
		return e.Type == "safety.card" && strings.Contains(string(e.Data), `"resend":3`)
	})
	evs := c.Events()
	if !stopped.At.Before(next.At) {
		t.Errorf("the resources stopped only after the next turn's transcript: the words did not stop them")
	}
	if n := st.bargeIns("interrupted"); n < 1 {
		t.Errorf("barge-in interrupted %v times, want at least once (protected %v)", n, st.bargeIns("protected"))
	}
	if n := countWhere(t, evs, func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_started" && p.TurnID == spokenTurn
	}); n != 1 {
		t.Errorf("resources spoken %d times, want once\n%s", n, dumpEvents(evs))
	}
	if n := countWhere(t, evs, func(e fixtures.Event, p payload) bool {
		return e.Type == "safety.card" && p.TurnID != turnID
	}); n != 0 || len(ofType(evs, "display.clear")) != 0 {
		t.Errorf("the crisis in force was re-carded (%d) or the card cleared", n)
	}
}

// TestSpokenResourcesFirmOnVoiceOnly: on a voice-only device the
// resources are spoken with the card, before the reply, and talking over
// them does not cut the numbers short: the words become the next turn,
// answered after them, with no second card and nothing spoken twice.
func TestSpokenResourcesFirmOnVoiceOnly(t *testing.T) {
	st := newStack(t, stackOptions{freshRouter: true})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c, turnID, _ := crisisCall(t, ctx, st, "voice-only")
	waitFor(t, ctx, c, "spoken resources", func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_started" && p.TurnID == turnID
	})
	c.play(t, ctx, concat(t, fixtures.Silence(16000, time.Second), fixture(t, "barge.16k.wav"), fixtures.Silence(16000, time.Second)))
	next := waitFor(t, ctx, c, "the words said over it", func(e fixtures.Event, p payload) bool {
		return e.Type == "transcript.final" && p.TurnID != turnID
	})
	nextID := decode(t, next).TurnID
	waitFor(t, ctx, c, "the next reply's audio", func(e fixtures.Event, p payload) bool {
		return e.Type == "reply.audio_stopped" && p.TurnID == nextID
	})
	evs := c.Events()
	var stopped fixtures.Event
	for _, e := range ofType(evs, "reply.audio_stopped") {
		if decode(t, e).TurnID == turnID {
			stopped = e
			break
		}
	}
	if stopped.Type == "" || stopped.At.Before(next.At) {
		t.Errorf("the firm resources stopped before the words said over them were transcribed\n%s", dumpEvents(evs))
	}
	// The next reply waits behind the resources (and the crisis turn's
	// reply) and nothing else: the first audio to start after them is its.
	for _, e := range ofType(evs, "reply.audio_started") {
		if p := decode(t, e); e.Seq > stopped.Seq {
			if p.TurnID != nextID {
				t.Errorf("after the resources, %s was spoken before the next reply %s\n%s", p.TurnID, nextID, dumpEvents(evs))
			}
			break
		}
	}
	if n := countWhere(t, evs, func(e fixtures.Event, p payload) bool { return e.Type == "reply.interrupted" && p.TurnID == turnID }); n != 0 {
		t.Errorf("the crisis turn was interrupted")
	}
	if n := st.bargeIns("protected"); n < 1 {
		t.Errorf("no barge-in met protected speech (interrupted %v)", st.bargeIns("interrupted"))
	}
	if n := len(ofType(evs, "safety.card")); n != 1 {
		t.Errorf("%d cards, want 1 (the crisis stays in force)", n)
	}
	if got := st.counters.Snapshot().Totals["spoken"]; got != 1 {
		t.Errorf("spoken counter %d, want 1", got)
	}
}
