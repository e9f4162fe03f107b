package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// words streams text one word at a time, as a token-streaming model does.
func words(text string, onDelta func(string)) {
	for i, w := range strings.Fields(text) {
		if i > 0 {
			w = " " + w
		}
		onDelta(w)
	}
}

// deltasOf returns the reply.delta texts among evs.
func deltasOf(evs []ev) []string {
	var out []string
	for _, e := range evs {
		if e.Type == event.TypeReplyDelta {
			out = append(out, e.str("delta"))
		}
	}
	return out
}

// TestDeltasCoalesceAtSentences: a reply streamed word by word reaches the
// client as one delta per sentence (clauses once they are long enough),
// whether it streamed (chat and voice alike) or was held behind the
// engine's safety and released at once; the deltas join to reply.done's
// text.
func TestDeltasCoalesceAtSentences(t *testing.T) {
	const reply = "I'm really glad you told me. That sounds like a heavy day, and you carried it all by yourself, didn't you? Tell me more."
	for _, stream := range []bool{true, false} {
		conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
			if stream {
				req.SafetyFinal(safety.Assessment{}) // the router declares safety final: text streams
			}
			words(reply, onDelta)
			return session.Reply{Message: reply}, nil
		}}
		// A fake clock that never moves: only boundaries and the end cut.
		m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
		s, st, _ := m.Open(owner, nil)
		until(t, st, event.TypeNotice)
		_ = s.Handle(context.Background(), &event.InputText{Text: "long day"})
		evs := until(t, st, event.TypeReplyDone)
		got := deltasOf(evs)
		want := []string{"I'm really glad you told me. ", "That sounds like a heavy day, and you carried it all by yourself, ",
			"didn't you? ", "Tell me more."}
		if !stream { // released at once: up to the last cut, then the end
			want = []string{want[0] + want[1] + want[2], want[3]}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("stream=%v: deltas %q, want %q", stream, got, want)
		}
		if done := evs[len(evs)-1]; done.str("text") != strings.Join(got, "") {
			t.Fatalf("stream=%v: deltas join to %q, reply.done says %q", stream, strings.Join(got, ""), done.str("text"))
		}
	}
}

// TestDeltasFlushAfterAStall: text that waits for a boundary while the
// model stalls goes out once it has waited maxPendingAge (400 ms) on the
// session clock, before the model continues.
func TestDeltasFlushAfterAStall(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	release := make(chan struct{})
	typed := make(chan struct{}) // every word before the stall has been handed over
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		req.SafetyFinal(safety.Assessment{})
		words("Let me think about", onDelta)
		close(typed)
		select {
		case <-release:
		case <-ctx.Done():
			return session.Reply{}, ctx.Err()
		}
		onDelta(" that.")
		return session.Reply{Message: "Let me think about that."}, nil
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, clk)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "hm"})
	until(t, st, event.TypeTranscriptFinal)
	// The stall begins once the model has handed over its words: advancing
	// the clock before the last of them arrived flushed only some (flaky
	// under -race).
	<-typed
	a := clk.WaitArmed(t, func(a clocktest.Armed) bool { return a.D == 400*time.Millisecond })
	clk.Advance(a.At.Sub(clk.Now()))
	if e := next(t, st); e.Type != event.TypeReplyDelta || e.str("delta") != "Let me think about" {
		t.Fatalf("after the stall: %s %q, want the waiting words", e.Type, e.str("delta"))
	}
	close(release)
	evs := until(t, st, event.TypeReplyDone)
	if got := deltasOf(evs); len(got) != 1 || got[0] != " that." {
		t.Fatalf("rest %q", got)
	}
}

// TestDeltasLongReplyBounded: a reply without any punctuation still flows
// in deltas of at most 160 bytes, cut between words, and a long one
// released at once in deltas of at most 4096 bytes.
func TestDeltasLongReplyBounded(t *testing.T) {
	long := strings.Repeat("and then more words ", 60) // 1200 bytes, no boundary
	for _, stream := range []bool{true, false} {
		conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
			if stream {
				req.SafetyFinal(safety.Assessment{})
			}
			words(long, onDelta)
			return session.Reply{Message: strings.TrimSpace(long)}, nil
		}}
		m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
		s, st, _ := m.Open(owner, nil)
		until(t, st, event.TypeNotice)
		_ = s.Handle(context.Background(), &event.InputText{Text: "go on"})
		got := deltasOf(until(t, st, event.TypeReplyDone))
		max, n := 160, 0
		if !stream {
			max = 4096
		}
		for i, d := range got {
			n += len(d)
			if len(d) > max+len("words") || (i < len(got)-1 && !strings.HasSuffix(d, " ")) {
				t.Fatalf("stream=%v: delta %d is %d bytes %q", stream, i, len(d), d)
			}
		}
		if strings.Join(got, "") != strings.TrimSpace(long) || (stream && len(got) < 6) || (!stream && len(got) > 2) {
			t.Fatalf("stream=%v: %d deltas, %d bytes", stream, len(got), n)
		}
	}
}
