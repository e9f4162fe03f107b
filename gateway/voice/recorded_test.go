package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio/wavio"
	"github.com/veraneural/vera-gateway/fixtures"
)

// Recorded sessions (testdata/recorded/<name>/) are live sessions the
// project recorded with record mode from espeak-ng speech; see
// testdata/recorded/README.md. TestRecordedSessions replays each one's
// inbound.ogg through a real pion peer against the real voice stack and
// compares the events with expected.json. TestRegenRecorded
// (VERA_RECORD_REGEN=1) makes them.

// expectedSession is a recorded session's expected.json.
type expectedSession struct {
	// Turns is the number of transcribed turns: the replay ends when every
	// one has been answered (or interrupted) and no reply audio plays.
	Turns int `json:"turns"`
	// Sequence is the normalised event sequence as "turn:type" (see
	// normaliseEvents).
	Sequence []string `json:"sequence"`
	// Transcripts are what the recogniser heard when the session was
	// recorded (informational: a different recogniser build may differ).
	Transcripts []string `json:"transcripts"`
	// Triggers: the client's audio is in segments separated by time in
	// which it sent nothing; segment i+1 was sent when the client received
	// Triggers[i] ("turn:type", e.g. "v1:reply.audio_started": the person
	// talked over that reply), and the replay does the same, so that a
	// reply that comes a little sooner or later is still talked over.
	Triggers []string `json:"triggers,omitempty"`
}

// normaliseEvents reduces received events to what a replay must
// reproduce: each event becomes "turn:type" ("-" for events without a
// turn; a notice is "notice/<kind>"). Dropped, because their number
// follows timing: transcript.partial, caption, the re-sends of an
// unacknowledged safety card (same card_id; the fixture client never acks)
// and repeats of a notice kind. A run of the same entry (reply.delta)
// counts once. Timings, seqs and payloads are ignored.
func normaliseEvents(t testing.TB, evs []fixtures.Event) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range evs {
		switch e.Type {
		case "transcript.partial", "caption":
			continue
		}
		p := decode(t, e)
		turn, typ := p.TurnID, e.Type
		if turn == "" {
			turn = "-"
		}
		switch typ {
		case "safety.card":
			if seen["card "+p.CardID] {
				continue
			}
			seen["card "+p.CardID] = true
		case "notice":
			typ += "/" + p.Kind
			if seen[typ] {
				continue
			}
			seen[typ] = true
		}
		s := turn + ":" + typ
		if len(out) > 0 && out[len(out)-1] == s {
			continue
		}
		out = append(out, s)
	}
	return out
}

// eventStreams splits a normalised sequence into the sub-sequences whose
// order is causal: per turn, its text events and its audio events
// (reply.audio_*). How the turns, and a turn's text and audio, interleave
// follows timing (a reply's audio can start before its text is done), so
// that is not compared.
func eventStreams(seq []string) map[string][]string {
	m := map[string][]string{}
	for _, s := range seq {
		turn, typ := splitEntry(s)
		key := turn
		if strings.HasPrefix(typ, "reply.audio_") {
			key += "/audio"
		}
		m[key] = append(m[key], typ)
	}
	return m
}

// splitEntry splits a normalised entry "turn:type" at its last colon (a
// turn id may hold one: "safety:card_v1_1", the spoken resources).
func splitEntry(s string) (turn, typ string) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+1:]
}

func recordedRoot(t testing.TB) string {
	return filepath.Join(fixtures.RepoRoot(t), "testdata", "recorded")
}

// oggSegments loads a recorded inbound.ogg as the streams to send: the
// runs of real packets, split where the client sent nothing (gap packets),
// each timed from its own start.
func oggSegments(t testing.TB, path string) []*fixtures.Stream {
	t.Helper()
	pkts, _, err := wavio.ReadOggFile(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	var segs []*fixtures.Stream
	var cur *fixtures.Stream
	for i, p := range pkts {
		if isGapPacket(p) {
			cur = nil
			continue
		}
		if d, err := wavio.OpusSamples(p); err != nil || d != 960 {
			t.Fatalf("%s packet %d: %d samples, %v (want 20 ms packets)", path, i, d, err)
		}
		if cur == nil {
			cur = &fixtures.Stream{}
			segs = append(segs, cur)
		}
		k := len(cur.Packets)
		cur.Packets = append(cur.Packets, fixtures.Packet{Payload: p, At: time.Duration(k) * fixtures.FrameDuration, Frame: k})
		cur.Duration = time.Duration(k+1) * fixtures.FrameDuration
	}
	return segs
}

// replaySegments plays the segments as one RTP stream (sequence numbers
// continue, timestamps follow the wall clock across the pauses), each
// later one when its trigger event has been received, and waits until the
// session is complete.
func replaySegments(t *testing.T, st *stack, segs []*fixtures.Stream, triggers []string, complete func([]fixtures.Event) bool) (*fixtures.Result, []fixtures.Packet) {
	t.Helper()
	if len(triggers) != len(segs)-1 {
		t.Fatalf("%d audio segments need %d triggers, expected.json has %d", len(segs), len(segs)-1, len(triggers))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	start := time.Now()
	var sent []fixtures.Packet
	for i, seg := range segs {
		if i > 0 {
			turn, typ := splitEntry(triggers[i-1])
			if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == typ && decode(t, e).TurnID == turn }); err != nil {
				t.Fatalf("trigger %s never came: %v\n%s", triggers[i-1], err, dumpEvents(c.Events()))
			}
		}
		ts := uint32(time.Since(start) * 48000 / time.Second)
		s := &fixtures.Stream{Duration: seg.Duration}
		for k, p := range seg.Packets {
			p.Seq, p.Timestamp = uint16(len(sent)+k), ts+uint32(k*960)
			s.Packets = append(s.Packets, p)
		}
		if err := c.Play(ctx, s); err != nil {
			t.Fatalf("play segment %d: %v", i, err)
		}
		sent = append(sent, s.Packets...)
	}
	if _, err := c.WaitEvent(ctx, func(fixtures.Event) bool { return complete(c.Events()) }); err != nil {
		t.Fatalf("replay did not complete: %v\n%s", err, dumpEvents(c.Events()))
	}
	return &fixtures.Result{Events: c.Events(), Audio: c.Received()}, sent
}

// TestRecordedSessions replays every committed recorded session.
func TestRecordedSessions(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(recordedRoot(t), "*", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 3 {
		t.Fatalf("%d recorded sessions in testdata/recorded, want at least 3", len(dirs))
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) { replayRecorded(t, dir) })
	}
}

func replayRecorded(t *testing.T, dir string) {
	var want expectedSession
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "expected.json")), &want); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	segs := oggSegments(t, filepath.Join(dir, RecordInbound))
	// The replay is itself recorded, which checks record mode against what
	// the client sent and received.
	cfg := testConfig()
	cfg.RecordDir = t.TempDir()
	st := newStack(t, stackOptions{freshRouter: true, cfg: &cfg})
	res, sent := replaySegments(t, st, segs, want.Triggers, repliesEnded(want.Turns))
	got := normaliseEvents(t, res.Events)
	if gs, ws := eventStreams(got), eventStreams(want.Sequence); !mapsEqual(gs, ws) {
		t.Errorf("event sequence differs from expected.json (transcripts now %q, recorded %q)\n got: %s\nwant: %s\n%s",
			transcripts(t, res.Events), want.Transcripts, strings.Join(got, " "), strings.Join(want.Sequence, " "), dumpEvents(res.Events))
	}
	if slices.ContainsFunc(want.Sequence, func(s string) bool { return strings.HasSuffix(s, ":safety.card") }) {
		checkCardFirst(t, res)
	}
	checkRecordedReplay(t, st, res, sent)
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// checkCardFirst: in the turn with a safety card, the card precedes the
// turn's first reply.delta (by seq) and the first packet of its reply
// audio (by client receive time).
func checkCardFirst(t *testing.T, res *fixtures.Result) {
	t.Helper()
	var card *fixtures.Event
	for i := range res.Events {
		if res.Events[i].Type == "safety.card" {
			card = &res.Events[i]
			break
		}
	}
	if card == nil {
		t.Fatalf("no safety.card in the replay\n%s", dumpEvents(res.Events))
	}
	turn := decode(t, *card).TurnID
	if !decode(t, *card).Required {
		t.Errorf("safety.card without requires_ack: %s", card.Data)
	}
	var final, delta, started *fixtures.Event
	for i := range res.Events {
		e := &res.Events[i]
		if decode(t, *e).TurnID != turn {
			continue
		}
		switch {
		case e.Type == "transcript.final" && final == nil:
			final = e
		case e.Type == "reply.delta" && delta == nil:
			delta = e
		case e.Type == "reply.audio_started" && started == nil:
			started = e
		}
	}
	if final == nil || delta == nil || started == nil {
		t.Fatalf("crisis turn %s: transcript %v, delta %v, audio %v\n%s", turn, final != nil, delta != nil, started != nil, dumpEvents(res.Events))
	}
	if card.Seq >= delta.Seq {
		t.Errorf("safety.card seq %d not before the first reply.delta seq %d", card.Seq, delta.Seq)
	}
	// The first packet after the transcript that is not the disclosure
	// still playing out is the reply's.
	from := final.At
	for _, e := range ofType(res.Events, "reply.audio_stopped") {
		if decode(t, e).TurnID == "notice" && e.At.After(from) {
			from = e.At
		}
	}
	first, ok := firstPacketAfter(res.Audio, from)
	if !ok {
		t.Fatalf("no reply audio packet\n%s", dumpEvents(res.Events))
	}
	if !card.At.Before(first.At) {
		t.Errorf("safety.card received %v after the first reply audio packet", card.At.Sub(first.At))
	}
}

// checkRecordedReplay compares the replay's own record with what the
// client sent and received: inbound.ogg holds exactly the packets sent,
// outbound.ogg starts with exactly the packets received (the gateway may
// have sent a few more after the client stopped listening), and the "out"
// lines of events.jsonl start with the events received, byte for byte.
func checkRecordedReplay(t *testing.T, st *stack, res *fixtures.Result, sent []fixtures.Packet) {
	t.Helper()
	st.mu.Lock()
	vs := st.voices[len(st.voices)-1]
	st.mu.Unlock()
	if vs.rec == nil {
		t.Fatal("record mode on but the session has no record")
	}
	select {
	case <-vs.rec.done: // the hang-up closed it
	case <-time.After(30 * time.Second):
		t.Fatal("the session's record was not closed after the hang-up")
	}
	if vs.rec.err != nil {
		t.Fatalf("record: %v", vs.rec.err)
	}
	real := func(name string) [][]byte {
		b := readFile(t, filepath.Join(vs.rec.dir, name))
		pages, err := parseOgg(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out [][]byte
		for _, p := range audioPages(t, pages) {
			if !isGapPacket(p) {
				out = append(out, p)
			}
		}
		return out
	}
	// UDP may lose a packet even on loopback when the machine is loaded,
	// so each side is checked as what one end saw of the other's stream:
	// in order, byte for byte, with at most 1 % missing.
	sentP := make([][]byte, len(sent))
	for i, p := range sent {
		sentP[i] = p.Payload
	}
	checkSubsequence(t, "inbound.ogg (what the gateway received) against what the client sent", real(RecordInbound), sentP, true)
	recvP := make([][]byte, len(res.Audio))
	for i, p := range res.Audio {
		recvP[i] = p.Payload
	}
	if len(recvP) == 0 {
		t.Error("the client received no reply audio")
	}
	// The client stops collecting when the session is complete, so the
	// gateway may have sent more than it kept.
	checkSubsequence(t, "what the client received against outbound.ogg (what the gateway sent)", recvP, real(RecordOutbound), false)
	var outEvents []json.RawMessage
	for i, l := range bytes.Split(bytes.TrimSpace(readFile(t, filepath.Join(vs.rec.dir, RecordEvents))), []byte("\n")) {
		var e recordedEvent
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("events.jsonl line %d: %v", i+1, err)
		}
		if e.Dir == "out" {
			outEvents = append(outEvents, e.Event)
		}
	}
	if len(outEvents) < len(res.Events) {
		t.Fatalf("events.jsonl has %d server events, the client received %d", len(outEvents), len(res.Events))
	}
	for i, e := range res.Events {
		if !bytes.Equal(outEvents[i], e.Data) {
			t.Fatalf("events.jsonl server event %d\n%s\ndiffers from the one received\n%s", i, outEvents[i], e.Data)
		}
	}
}

// speech synthesises text the way testdata/voice's clips are made.
func speech(t *testing.T, text string) *fixtures.Audio {
	t.Helper()
	tmp := t.TempDir()
	raw, out := filepath.Join(tmp, "raw.wav"), filepath.Join(tmp, "x.16k.wav")
	for _, c := range [][]string{
		{"espeak-ng", "-v", "en-us", "-s", "120", "-p", "35", "-w", raw, text},
		{"sox", raw, "-r", "16000", "-c", "1", "-b", "16", out, "vol", "0.15", "pad", "0.3", "0.3"},
	} {
		if b, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, b)
		}
	}
	return loadWAV(t, out)
}

// TestRegenRecorded records the sessions of testdata/recorded with record
// mode, from espeak-ng speech, and writes their expected.json. Run with
// VERA_RECORD_REGEN=1 (needs espeak-ng and sox); see the README there.
func TestRegenRecorded(t *testing.T) {
	if os.Getenv("VERA_RECORD_REGEN") == "" {
		t.Skip("generator: set VERA_RECORD_REGEN=1 to re-record testdata/recorded")
	}
	one := func(text string) func(t *testing.T, st *stack) *fixtures.Result {
		return func(t *testing.T, st *stack) *fixtures.Result {
			a := concat(t, fixtures.Silence(16000, time.Second), speech(t, text), fixtures.Silence(16000, time.Second))
			return runScenario(t, st, encode(t, a), repliesEnded(1), 120*time.Second)
		}
	}
	sessions := []struct {
		name     string
		check    func(evs []fixtures.Event) error
		run      func(t *testing.T, st *stack) *fixtures.Result
		triggers []string
	}{
		{"question", nil, one("How can I sleep better at night"), nil},
		{"crisis", func(evs []fixtures.Event) error {
			if len(ofType(evs, "safety.card")) == 0 {
				return fmt.Errorf("no safety card")
			}
			return nil
		}, one("I am going to kill myself tonight"), nil},
		{"bargein", func(evs []fixtures.Event) error {
			if len(ofType(evs, "reply.interrupted")) == 0 {
				return fmt.Errorf("no reply.interrupted")
			}
			return nil
		}, recordBargeIn, []string{"v1:reply.audio_started"}},
		{"spoken_once", checkSpokenOnce, recordSpokenOnce, []string{"safety:card_v1_1:reply.audio_stopped"}},
	}
	for _, s := range sessions {
		if only := os.Getenv("VERA_RECORD_ONLY"); only != "" && only != s.name {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RecordDir = t.TempDir()
			st := newStack(t, stackOptions{freshRouter: true, cfg: &cfg})
			res := s.run(t, st)
			if s.check != nil {
				if err := s.check(res.Events); err != nil {
					t.Fatalf("%v; transcripts %q\n%s", err, transcripts(t, res.Events), dumpEvents(res.Events))
				}
			}
			st.mu.Lock()
			vs := st.voices[len(st.voices)-1]
			st.mu.Unlock()
			<-vs.rec.done
			if vs.rec.err != nil {
				t.Fatal(vs.rec.err)
			}
			dst := filepath.Join(recordedRoot(t), s.name)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{RecordInbound, RecordOutbound, RecordEvents} {
				if err := os.WriteFile(filepath.Join(dst, f), readFile(t, filepath.Join(vs.rec.dir, f)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			exp := expectedSession{Turns: len(transcripts(t, res.Events)), Sequence: normaliseEvents(t, res.Events),
				Transcripts: transcripts(t, res.Events), Triggers: s.triggers}
			b, err := json.MarshalIndent(exp, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, "expected.json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: transcripts %q\n%s", s.name, exp.Transcripts, dumpEvents(res.Events))
		})
	}
}

// recordBargeIn: a first turn long enough for a long reply (the companion
// reflects the words back), then, a second into VERA's reply, a sentence
// over it.
func recordBargeIn(t *testing.T, st *stack) *fixtures.Result {
	// Both sentences are synthesised before the call: espeak-ng and sox on
	// a busy machine would otherwise delay the speech past its moment.
	first := concat(t, fixtures.Silence(16000, 2*time.Second), speech(t, "I would like to go home and talk to my family about my new job"))
	over := concat(t, fixtures.Silence(16000, time.Second),
		speech(t, "please stop talking now and listen to me because I have something important to tell you"), fixtures.Silence(16000, time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	pl := &player{Client: c}
	pl.play(t, ctx, first)
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_started" && decode(t, e).TurnID == "v1"
	}); err != nil {
		t.Fatalf("reply audio never started: %v\n%s", err, dumpEvents(c.Events()))
	}
	pl.play(t, ctx, over)
	if _, err := c.WaitEvent(ctx, func(fixtures.Event) bool { return repliesEnded(2)(c.Events()) }); err != nil {
		t.Fatalf("barge-in session did not end: %v\n%s", err, dumpEvents(c.Events()))
	}
	return &fixtures.Result{Events: c.Events(), Audio: c.Received()}
}

// checkSubsequence: every packet of part appears in whole, in order, byte
// for byte; with complete, part also misses at most 1 % of whole.
func checkSubsequence(t *testing.T, what string, part, whole [][]byte, complete bool) {
	t.Helper()
	j := 0
	for i, p := range part {
		for j < len(whole) && !bytes.Equal(p, whole[j]) {
			j++
		}
		if j == len(whole) {
			t.Fatalf("%s: packet %d of %d is not in order in the %d of the other side", what, i, len(part), len(whole))
		}
		j++
	}
	if missing := len(whole) - len(part); complete && missing*100 > len(whole) {
		t.Errorf("%s: %d packets against %d", what, len(part), len(whole))
	}
}

// recordSpokenOnce: the crisis sentence; the fixture client never
// acknowledges the card, so its first re-send is spoken (the glasses can
// be talked over, but no one does); once that has played out, the same
// sentence again, which the crisis in force covers: no second card, no
// second speech.
func recordSpokenOnce(t *testing.T, st *stack) *fixtures.Result {
	first := concat(t, fixtures.Silence(16000, 2*time.Second), speech(t, "I am going to kill myself tonight"))
	again := concat(t, fixtures.Silence(16000, time.Second), speech(t, "I am going to kill myself tonight"), fixtures.Silence(16000, time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	pl := &player{Client: c}
	pl.play(t, ctx, first)
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool {
		return e.Type == "reply.audio_stopped" && decode(t, e).TurnID == "safety:card_v1_1"
	}); err != nil {
		t.Fatalf("the resources were never spoken: %v\n%s", err, dumpEvents(c.Events()))
	}
	pl.play(t, ctx, again)
	if _, err := c.WaitEvent(ctx, func(fixtures.Event) bool { return repliesEnded(2)(c.Events()) }); err != nil {
		t.Fatalf("spoken-once session did not end: %v\n%s", err, dumpEvents(c.Events()))
	}
	return &fixtures.Result{Events: c.Events(), Audio: c.Received()}
}

// checkSpokenOnce: one card, its resources spoken once, the second turn
// carded by nothing new.
func checkSpokenOnce(evs []fixtures.Event) error {
	cards, spoken := map[string]bool{}, 0
	for _, e := range evs {
		var p struct {
			TurnID string `json:"turn_id"`
			CardID string `json:"card_id"`
		}
		_ = json.Unmarshal(e.Data, &p)
		switch {
		case e.Type == "safety.card":
			cards[p.CardID] = true
		case e.Type == "reply.audio_started" && strings.HasPrefix(p.TurnID, "safety:"):
			spoken++
		}
	}
	if len(cards) != 1 || spoken != 1 {
		return fmt.Errorf("%d cards, resources spoken %d times: want 1 and 1", len(cards), spoken)
	}
	return nil
}
