package voice

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// bargeSession connects, says the first turn and waits until its reply
// starts playing; the caller then plays over it.
func bargeSession(t *testing.T, st *stack, ctx context.Context) (*player, string) {
	t.Helper()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	})
	pl := &player{Client: c}
	pl.play(t, ctx, concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "gohome.16k.wav")))
	final, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "transcript.final" })
	if err != nil {
		t.Fatalf("no transcript: %v\n%s", err, dumpEvents(c.Events()))
	}
	turnID := decode(t, final).TurnID
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_started" && decode(t, e).TurnID == turnID
	}); err != nil {
		t.Fatalf("reply audio never started: %v\n%s", err, dumpEvents(c.Events()))
	}
	return pl, turnID
}

// player plays clips one after another as one RTP stream: sequence numbers
// continue and timestamps follow the wall clock across the gaps, as a
// client with discontinuous transmission sends them.
type player struct {
	*fixtures.Client
	start time.Time
	seq   uint16
}

func (p *player) play(t *testing.T, ctx context.Context, a *fixtures.Audio) {
	t.Helper()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	ts := uint32(time.Since(p.start) * 48000 / time.Second)
	s, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true, FirstSeq: p.seq, FirstTS: ts})
	if err != nil {
		t.Fatal(err)
	}
	p.seq += uint16(len(s.Packets))
	if err := p.Play(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func replyText(t *testing.T, evs []fixtures.Event, turnID string) string {
	for _, e := range ofType(evs, "reply.done") {
		if p := decode(t, e); p.TurnID == turnID {
			return p.Text
		}
	}
	return ""
}

// TestBargeInInterruptsReply: the person talks over VERA's reply; playout
// stops, reply.interrupted carries the words actually heard (a prefix of
// the reply), the turn ends as docs/events.md's last-event table says, and
// what they said becomes the next turn.
func TestBargeInInterruptsReply(t *testing.T) {
	st := newStack(t, stackOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, turnID := bargeSession(t, st, ctx)
	// One second into the reply, talk over it.
	over := concat(t, fixtures.Silence(16000, time.Second), fixture(t, "barge.16k.wav"), fixtures.Silence(16000, time.Second))
	c.play(t, ctx, over)
	ie, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "reply.interrupted" })
	if err != nil {
		t.Fatalf("no reply.interrupted: %v\n%s", err, dumpEvents(c.Events()))
	}
	p := decode(t, ie)
	if p.TurnID != turnID || p.Reason != "barge_in" {
		t.Errorf("reply.interrupted %s: want turn %s, reason barge_in", ie.Data, turnID)
	}
	// The next turn (the words said over the reply) is answered.
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_stopped" && decode(t, e).TurnID != turnID && decode(t, e).TurnID != "notice"
	}); err != nil {
		t.Fatalf("the barge-in turn was not answered: %v\n%s", err, dumpEvents(c.Events()))
	}
	evs := c.Events()
	checkLastEvent(t, "voice, barged in on", evs, turnID)
	full := replyText(t, evs, turnID)
	heard, words := strings.Fields(p.Heard), strings.Fields(full)
	if len(heard) == 0 || len(heard) >= len(words) {
		t.Errorf("heard %q of reply %q: want a non-empty proper prefix (one second was played)", p.Heard, full)
	}
	for i := range heard {
		if i >= len(words) || heard[i] != words[i] {
			t.Fatalf("heard %q is not a prefix of the reply %q", p.Heard, full)
		}
	}
	// Playout stopped: no audio from the interruption until the next reply.
	var next time.Time
	for _, e := range ofType(evs, "reply.audio_started") {
		if e.At.After(ie.At) {
			next = e.At
			break
		}
	}
	stray := 0
	for _, pk := range c.Received() {
		if pk.At.After(ie.At.Add(100*time.Millisecond)) && (next.IsZero() || pk.At.Before(next.Add(-100*time.Millisecond))) {
			stray++
		}
	}
	if stray > 0 {
		t.Errorf("%d audio packets after reply.interrupted, before the next reply\n%s", stray, dumpEvents(evs))
	}
	if n := st.bargeIns("interrupted"); n != 1 {
		t.Errorf("barge_ins_total{outcome=interrupted} = %v, want 1", n)
	}
	t.Logf("heard %q of %q", p.Heard, full)
}

// TestFalseInterruptionResumes: a noise burst over the reply (long enough
// to pause it, no words) resumes playout after resume_after_ms; the reply
// plays to its end and is not interrupted.
func TestFalseInterruptionResumes(t *testing.T) {
	st := newStack(t, stackOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, turnID := bargeSession(t, st, ctx)
	over := concat(t, fixtures.Silence(16000, time.Second), fixture(t, "cough.16k.wav"), fixtures.Silence(16000, time.Second))
	c.play(t, ctx, over)
	stopped, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_stopped" && decode(t, e).TurnID == turnID
	})
	if err != nil {
		t.Fatalf("reply audio never stopped: %v\n%s", err, dumpEvents(c.Events()))
	}
	evs := c.Events()
	if n := len(ofType(evs, "reply.interrupted")); n != 0 {
		t.Fatalf("a noise burst interrupted the reply\n%s", dumpEvents(evs))
	}
	if n := st.bargeIns("resumed"); n != 1 {
		t.Errorf("barge_ins_total{outcome=resumed} = %v, want 1\n%s", n, dumpEvents(evs))
	}
	// The pause shows as a gap in the reply's packets, and playout went on
	// after it.
	var started time.Time
	for _, e := range ofType(evs, "reply.audio_started") {
		if decode(t, e).TurnID == turnID {
			started = e.At
		}
	}
	var last time.Time
	gap, after := time.Duration(0), 0
	for _, pk := range c.Received() {
		if pk.At.Before(started) || pk.At.After(stopped.At) {
			continue
		}
		if !last.IsZero() && pk.At.Sub(last) > gap {
			gap = pk.At.Sub(last)
			after = 0
		}
		after++
		last = pk.At
	}
	if gap < time.Second || after < 10 {
		t.Errorf("longest gap in the reply's audio %v with %d packets after it: want a pause of about resume_after_ms, then the rest", gap, after)
	}
	t.Logf("paused %v, %d packets after the pause", gap, after)
}

// checkLastEvent holds turn turnID's events in evs to the row of
// docs/events.md's last-event table named row: the turn's last event is
// the row's, each event it names before it came before it, and every
// event the client got is documented.
func checkLastEvent(t *testing.T, row string, evs []fixtures.Event, turnID string) {
	t.Helper()
	docs := fixtures.ReadEventDocs(t)
	want, ok := docs.LastEvent[row]
	if !ok {
		t.Fatalf("docs/events.md's last-event table has no row %q", row)
	}
	for _, e := range evs {
		if err := docs.CheckEvent(e.Data); err != nil {
			t.Error(err)
		}
	}
	last, seen := -1, map[string]int{}
	for i, e := range evs {
		if decode(t, e).TurnID == turnID {
			last = i
			if _, ok := seen[e.Type]; !ok {
				seen[e.Type] = i
			}
		}
	}
	if last < 0 || evs[last].Type != want.Type {
		t.Fatalf("turn %s (%s): its last event is not %s as docs/events.md says\n%s", turnID, row, want.Type, dumpEvents(evs))
	}
	for _, before := range want.After {
		if i, ok := seen[before]; !ok || i > last {
			t.Fatalf("turn %s (%s): no %s before its %s as docs/events.md says\n%s", turnID, row, before, want.Type, dumpEvents(evs))
		}
	}
}
