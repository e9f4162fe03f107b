package voice

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// resumeOnNewConnection opens a phone session, drops its connection after
// the disclosure notice (the app is killed: no DELETE) and resumes it on a
// new connection with the token and last seq. It returns the new client
// and the resumed conversation's session id.
func resumeOnNewConnection(t *testing.T, ctx context.Context, opts fixtures.ClientOptions) (*fixtures.Client, string) {
	t.Helper()
	a, err := fixtures.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	created, err := a.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "session.created" })
	if err != nil {
		t.Fatal(err)
	}
	var sid struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(created.Data, &sid)
	notice, err := a.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "notice" })
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Drop(); err != nil {
		t.Fatal(err)
	}
	b, err := fixtures.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	hello, _ := json.Marshal(map[string]any{"type": "hello", "device": opts.Device, "resume_token": decode(t, created).Token, "last_seq": notice.Seq})
	if err := b.SendEvent(hello); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "session.created" && decode(t, e).Resumed
	}); err != nil {
		t.Fatalf("no resumed session.created: %v\n%s", err, dumpEvents(b.Events()))
	}
	return b, sid.SessionID
}

// TestDisclosureYieldsOnResume: a resumed connection still plays the
// disclosure its own session opened with; a turn with words that cannot
// pause it (no speech is long enough to be a barge-in here) stops it, so
// the resumed conversation's reply does not wait behind it.
func TestDisclosureYieldsOnResume(t *testing.T) {
	st := unbargeableLongDisclosure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b, _ := resumeOnNewConnection(t, ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "phone"})
	if _, err := b.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_started" && decode(t, e).TurnID == noticeTurn
	}); err != nil {
		t.Fatalf("the new connection's disclosure did not start: %v\n%s", err, dumpEvents(b.Events()))
	}
	pl := &player{Client: b}
	pl.play(t, ctx, concat(t, fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second)))
	if _, err := b.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_started" && decode(t, e).TurnID == "v1"
	}); err != nil {
		t.Fatalf("the resumed conversation was not answered: %v\n%s", err, dumpEvents(b.Events()))
	}
	evs := b.Events()
	_, first := noticeAudio(t, evs)
	if first < 0 || first > replyAudioStart(t, evs, "v1") {
		t.Fatalf("want the disclosure's audio stopped before the reply's started\n%s", dumpEvents(evs))
	}
	if n := st.bargeIns("disclosure_shown"); n != 1 {
		t.Fatalf("disclosure cut short %v times, want 1 (the reply waited behind it)\n%s", n, dumpEvents(evs))
	}
}

// TestResumeOverVoice: a phone's connection vanishes (no hang-up); a new
// connection's hello with the resume token and last seq carries on the same
// conversation and receives every event after that seq, then talks on it.
func TestResumeOverVoice(t *testing.T) {
	st := newStack(t, stackOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	opts := fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"}
	a, err := fixtures.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	created, err := a.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "session.created" })
	if err != nil {
		t.Fatal(err)
	}
	cp := decode(t, created)
	var sid struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(created.Data, &sid)
	notice, err := a.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "notice" })
	if err != nil {
		t.Fatal(err)
	}
	last := notice.Seq
	if err := a.Drop(); err != nil { // the app is killed: no DELETE
		t.Fatal(err)
	}

	b, err := fixtures.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	hello, _ := json.Marshal(map[string]any{"type": "hello", "device": "meta-rayban-display", "resume_token": cp.Token, "last_seq": last})
	if err := b.SendEvent(hello); err != nil {
		t.Fatal(err)
	}
	inSession := func(e fixtures.Event) bool {
		var p struct {
			SessionID string `json:"session_id"`
		}
		return json.Unmarshal(e.Data, &p) == nil && p.SessionID == sid.SessionID
	}
	if _, err := b.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "session.created" && inSession(e) && decode(t, e).Resumed
	}); err != nil {
		t.Fatalf("no resumed session.created: %v\n%s", err, dumpEvents(b.Events()))
	}
	// The conversation goes on over the new connection.
	pl := &player{Client: b}
	pl.play(t, ctx, concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second)))
	if _, err := b.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_stopped" && inSession(e) && decode(t, e).TurnID != "notice"
	}); err != nil {
		t.Fatalf("the resumed conversation was not answered: %v\n%s", err, dumpEvents(b.Events()))
	}
	var seqs []int64
	for _, e := range b.Events() {
		if inSession(e) && e.Seq > 0 {
			seqs = append(seqs, e.Seq)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	if len(seqs) == 0 || seqs[0] != last+1 {
		t.Fatalf("resumed events start at %v, want seq %d\n%s", seqs, last+1, dumpEvents(b.Events()))
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("events lost or repeated: seqs %v", seqs)
		}
	}
	if len(ofType(b.Events(), "transcript.final")) == 0 {
		t.Errorf("no transcript on the resumed conversation")
	}
	if s, ok := st.sessions.Get(sid.SessionID); !ok || len(s.History()) < 2 {
		t.Errorf("the resumed conversation's history lacks the turn")
	}
}

// TestICERestartKeepsConversation: an ICE restart (PATCH) mid-session loses
// no event and the next turn is heard and answered on the same session.
func TestICERestartKeepsConversation(t *testing.T) {
	st := newStack(t, stackOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "notice" }); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartICE(ctx); err != nil {
		t.Fatal(err)
	}
	pl := &player{Client: c}
	pl.play(t, ctx, concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second)))
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_stopped" && decode(t, e).TurnID != "notice"
	}); err != nil {
		t.Fatalf("no reply after the ICE restart: %v\n%s", err, dumpEvents(c.Events()))
	}
	evs := c.Events()
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: events lost or reordered\n%s", i, e.Seq, dumpEvents(evs))
		}
	}
	if trs := transcripts(t, evs); len(trs) != 1 {
		t.Errorf("transcripts %q, want one turn", trs)
	}
}
