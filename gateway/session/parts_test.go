package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// offering proposes a new action on every turn and answers it.
type offering struct {
	mu sync.Mutex
	n  int
}

func (o *offering) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	o.mu.Lock()
	o.n++
	id := fmt.Sprintf("act_%d", o.n)
	o.mu.Unlock()
	onDelta("Noted. ")
	if ctx.Err() != nil {
		return session.Reply{}, ctx.Err()
	}
	return session.Reply{Message: "Noted. " + req.Text, ProposedActions: []session.Action{{ID: id, Type: "reminder", Title: "Remind me " + id}}}, nil
}

// Every part of a session driven at once — text and spoken turns, keys,
// acks, speech and audio events, titles, interrupts, results and the
// clock firing ack, silence and expiry timers — never deadlocks, Close
// joins everything, and the safety invariants hold in the event log: a
// crisis turn always has its card, and a card goes out before the first
// reply text of its turn.
func TestPartsUnderConcurrentInput(t *testing.T) {
	cfg := session.DefaultConfig()
	cfg.ReplayEvents, cfg.ReplayBytes, cfg.MaxQueued = 1<<20, 1<<30, 64
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, err := session.NewManager(cfg, session.Deps{Converser: &offering{}, Safety: keywordSafety{}, Layout: testLayout, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	if err != nil {
		t.Fatal(err)
	}

	var log []ev
	read, idle := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		sentinel := ""
		for {
			b, err := st.Next(context.Background())
			if err != nil {
				return
			}
			var e ev
			_ = json.Unmarshal(b, &e.Envelope)
			_ = json.Unmarshal(b, &e.raw)
			log = append(log, e)
			switch {
			case e.Type == event.TypeTranscriptFinal && e.str("text") == "sentinel":
				sentinel = e.str("turn_id")
			case e.Type == event.TypeReplyDone && sentinel != "" && e.str("turn_id") == sentinel:
				close(idle)
			}
		}
	}()

	ctx := context.Background()
	texts := []string{"hello", "I want to end my life", "yes", "no", "maybe later", "tell me more"}
	keys := []string{event.KeyNext, event.KeyPrev, event.KeySelect, event.KeyBack}
	steps := []func(r *rand.Rand, i int){
		func(r *rand.Rand, i int) {
			_ = s.Handle(ctx, &event.InputText{Text: texts[r.IntN(len(texts))]})
		},
		func(r *rand.Rand, i int) { s.SubmitTurn(fmt.Sprintf("v%d", i), texts[r.IntN(len(texts))]) },
		func(r *rand.Rand, i int) {
			_ = s.Handle(ctx, &event.InputKey{Key: keys[r.IntN(len(keys))], Surface: "display"})
		},
		func(r *rand.Rand, i int) {
			_ = s.Handle(ctx, &event.DisplayAck{CardID: fmt.Sprintf("card_turn_%d_1", 1+r.IntN(i+1)), Page: 1, Surface: "display"})
		},
		func(r *rand.Rand, i int) {
			turn := fmt.Sprintf("turn_%d", 1+r.IntN(i+1))
			for _, ty := range []event.Type{event.TypeSpeechStarted, event.TypeReplyAudioStarted, event.TypeSpeechStopped, event.TypeReplyAudioStopped} {
				if ty == event.TypeSpeechStarted || ty == event.TypeSpeechStopped {
					s.Emit(ty, event.Speech{TurnID: turn})
				} else {
					s.Emit(ty, event.ReplyAudio{TurnID: turn})
				}
			}
			s.NothingHeard(turn)
		},
		func(r *rand.Rand, i int) {
			if r.IntN(2) == 0 {
				s.SetTitle("A title")
			} else {
				s.Rename(fmt.Sprintf("Mine %d", i))
			}
		},
		func(r *rand.Rand, i int) {
			s.Interrupt(fmt.Sprintf("turn_%d", 1+r.IntN(i+1)), "Noted.", "barge_in")
			_ = s.ReportResult(fmt.Sprintf("act_%d", 1+r.IntN(i+1)), session.StatusSucceeded)
			_ = s.Handle(ctx, &event.ActionApprove{ActionID: fmt.Sprintf("act_%d", 1+r.IntN(i+1))})
		},
		func(r *rand.Rand, i int) { clk.Advance(time.Duration(1+r.IntN(30)) * time.Second) },
	}
	var wg sync.WaitGroup
	for w := range len(steps) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			// 8 workers x 24 steps: 48 inputs at most, fewer than
			// MaxQueued, so the sentinel below is never rate-limited.
			for i := range 24 {
				steps[(w+i)%len(steps)](r, i)
			}
		}()
	}
	wg.Wait()
	// Every queued turn has run once the last input's reply is done.
	s.Submit("sentinel")
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	select {
	case <-idle:
	case <-cctx.Done():
		buf := make([]byte, 1<<20)
		t.Fatalf("the last turn never finished (a part deadlocked?)\n%s", buf[:runtime.Stack(buf, true)])
	}
	if err := m.End(cctx, s); err != nil {
		t.Fatalf("close: %v (a part deadlocked?)", err)
	}
	<-read

	// A crisis stays in force: the first crisis turn shows the card before
	// its reply text; every later one is covered by it (no second card)
	// and reported at crisis.
	card := map[string]int{}    // turn → index of its first card
	crisis := map[string]bool{} // turns whose transcript is a crisis
	inForce := -1               // index of the first crisis card
	for i, e := range log {
		turn := e.str("turn_id")
		switch e.Type {
		case event.TypeTranscriptFinal:
			crisis[turn] = strings.Contains(e.str("text"), "end my life")
		case event.TypeSafetyCard:
			if _, ok := card[turn]; !ok {
				card[turn] = i
			}
			if inForce < 0 && e.str("level") == "crisis" {
				inForce = i
			}
		case event.TypeReplyDelta:
			if crisis[turn] && (inForce < 0 || inForce > i) {
				t.Fatalf("turn %s: reply text at event %d before any crisis card", turn, i)
			}
		case event.TypeReplyDone:
			if crisis[turn] && e.str("safety_level") != "crisis" {
				t.Fatalf("crisis turn %s done at level %q", turn, e.str("safety_level"))
			}
		}
	}
	n := 0
	for turn, c := range crisis {
		if !c {
			continue
		}
		n++
		if c, ok := card[turn]; ok && c != inForce {
			t.Errorf("crisis turn %s sent a second card though one is in force", turn)
		}
	}
	if n == 0 || len(log) < 100 {
		t.Fatalf("the run exercised too little: %d crisis turns, %d events", n, len(log))
	}
}
