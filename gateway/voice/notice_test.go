package voice

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// fakeSpeaker speaks a tone whose length follows the text, counting calls.
// With gate set, each call first reports on entered, then waits for a
// value on gate (or its ctx).
type fakeSpeaker struct {
	gate    chan struct{}
	entered chan struct{}
	err     error
	long    bool // speak more than maxPhraseSamples

	mu    sync.Mutex // guards calls
	calls map[string]int
}

func (f *fakeSpeaker) Speak(ctx context.Context, req router.SpeakRequest, onAudio func(router.AudioChunk) error) (router.SpeakResult, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[req.Text]++
	f.mu.Unlock()
	if f.gate != nil {
		f.entered <- struct{}{}
		select {
		case <-f.gate:
		case <-ctx.Done():
			return router.SpeakResult{}, ctx.Err()
		}
	}
	if f.err != nil {
		return router.SpeakResult{}, f.err
	}
	n := 1000 + 160*len(req.Text) // deliberately not a whole number of frames
	if f.long {
		n = maxPhraseSamples/2 + 1
	}
	for range 2 {
		if err := onAudio(router.AudioChunk{Codec: router.CodecPCM, SampleRate: req.SampleRate, PCM: tone(n)}); err != nil {
			return router.SpeakResult{}, err
		}
	}
	return router.SpeakResult{Model: "fake"}, nil
}

func (f *fakeSpeaker) count(text string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[text]
}

func tone(n int) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rtc.PCMRate))
	}
	return pcm
}

func counterValue(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

var testParams = rtc.EncoderParams{Bitrate: 24000, Complexity: 5}

// TestPhraseCacheSynthesisesOnce: concurrent first requests share one
// synthesis; the phrase is the speaker's audio in whole 20 ms Opus frames
// that decode back to it; later requests are hits.
func TestPhraseCacheSynthesisesOnce(t *testing.T) {
	sp := &fakeSpeaker{gate: make(chan struct{}), entered: make(chan struct{}, 8)}
	m := NewMetrics(nil)
	c := newPhraseCache(sp, 4, m)
	const n = 8
	got := make([]*phrase, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = c.get(context.Background(), "hello there", testParams) })
	}
	// Release the one synthesis (callers arriving after it are hits too).
	<-sp.entered
	close(sp.gate)
	wg.Wait()
	if k := sp.count("hello there"); k != 1 {
		t.Fatalf("speaker called %d times for one phrase, want 1", k)
	}
	for i := range n {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("request %d: %p %v, want the shared phrase %p", i, got[i], errs[i], got[0])
		}
	}
	ph := got[0]
	wantPCM := 2 * (1000 + 160*len("hello there"))
	if len(ph.pcm) != wantPCM || ph.text != "hello there" {
		t.Fatalf("phrase pcm %d samples text %q, want %d", len(ph.pcm), ph.text, wantPCM)
	}
	if want := (wantPCM + rtc.PCMFrame - 1) / rtc.PCMFrame; len(ph.frames) != want {
		t.Fatalf("%d frames, want %d", len(ph.frames), want)
	}
	// The frames decode to the tone (Opus is lossy: compare energy).
	dec, err := codec.NewDecoder(DefaultConfig().Codec)
	if err != nil {
		t.Fatal(err)
	}
	var energy float64
	out := make([]int16, rtc.PCMFrame)
	for _, f := range ph.frames {
		if err := dec.DecodeFrame(f, out); err != nil {
			t.Fatal(err)
		}
		for _, v := range out {
			energy += float64(v) * float64(v)
		}
	}
	if rms := math.Sqrt(energy / float64(len(ph.frames)*rtc.PCMFrame)); rms < 3000 {
		t.Fatalf("decoded rms %.0f, want about 5600 (the tone)", rms)
	}
	if _, err := c.get(context.Background(), "hello there", testParams); err != nil {
		t.Fatal(err)
	}
	if hit, miss := counterValue(t, m.PhraseCache.WithLabelValues("hit")), counterValue(t, m.PhraseCache.WithLabelValues("miss")); hit != n || miss != 1 {
		t.Fatalf("hits %v misses %v, want %d and 1", hit, miss, n)
	}
	// Other encoder settings are another phrase.
	if _, err := c.get(context.Background(), "hello there", rtc.EncoderParams{Bitrate: 16000, Complexity: 2}); err != nil {
		t.Fatal(err)
	}
	if k := sp.count("hello there"); k != 2 {
		t.Fatalf("speaker called %d times, want 2 (new encoder settings)", k)
	}
}

// TestPhraseCacheEvictsLeastRecent: the cache holds max phrases.
func TestPhraseCacheEvictsLeastRecent(t *testing.T) {
	sp := &fakeSpeaker{}
	c := newPhraseCache(sp, 2, NewMetrics(nil))
	ctx := context.Background()
	for _, text := range []string{"a", "b", "a", "c", "a", "b"} {
		if _, err := c.get(ctx, text, testParams); err != nil {
			t.Fatal(err)
		}
	}
	// a stays (used most), b was evicted by c, then c by b.
	if sp.count("a") != 1 || sp.count("b") != 2 || sp.count("c") != 1 {
		t.Fatalf("calls %v", sp.calls)
	}
	if c.lru.Len() != 2 || len(c.entries) != 2 {
		t.Fatalf("cache holds %d (%d entries), want 2", c.lru.Len(), len(c.entries))
	}
}

// TestPhraseCacheFirstCallerGoes: when the session synthesising a phrase
// closes, a waiting session synthesises it itself rather than failing.
func TestPhraseCacheFirstCallerGoes(t *testing.T) {
	sp := &fakeSpeaker{gate: make(chan struct{}), entered: make(chan struct{}, 2)}
	c := newPhraseCache(sp, 2, NewMetrics(nil))
	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := c.get(first, "notice", testParams)
		firstErr <- err
	}()
	<-sp.entered
	second := make(chan error, 1)
	var ph *phrase
	go func() {
		var err error
		ph, err = c.get(context.Background(), "notice", testParams)
		second <- err
	}()
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller: %v, want canceled", err)
	}
	<-sp.entered // the second caller synthesises
	sp.gate <- struct{}{}
	if err := <-second; err != nil || ph == nil {
		t.Fatalf("second caller: %v", err)
	}
}

// TestPhraseCacheErrors: a speaker failure or a phrase too long is not
// cached, and reaches the caller (who then speaks it per session).
func TestPhraseCacheErrors(t *testing.T) {
	boom := errors.New("boom")
	c := newPhraseCache(&fakeSpeaker{err: boom}, 2, NewMetrics(nil))
	if _, err := c.get(context.Background(), "x", testParams); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if len(c.entries) != 0 {
		t.Fatal("a failed phrase was cached")
	}
	c = newPhraseCache(&fakeSpeaker{long: true}, 2, NewMetrics(nil))
	if _, err := c.get(context.Background(), "x", testParams); !errors.Is(err, errPhraseTooLong) {
		t.Fatalf("err %v, want errPhraseTooLong", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c = newPhraseCache(&fakeSpeaker{gate: make(chan struct{}), entered: make(chan struct{}, 1)}, 2, NewMetrics(nil))
	if _, err := c.get(ctx, "x", testParams); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want canceled", err)
	}
}

// TestPhraseSourcePlaysFrames: a phrase source hands out the cached frames
// in order, taps their PCM, counts its frames as cached, is not reply text
// and is not protected: the person may talk over the disclosure.
func TestPhraseSourcePlaysFrames(t *testing.T) {
	c := newPhraseCache(&fakeSpeaker{}, 2, NewMetrics(nil))
	ph, err := c.get(context.Background(), "I'm VERA, an AI.", testParams)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(nil)
	tapped := 0
	src := newPhraseSource(ph, func(pcm []int16, _ uint32) { tapped += len(pcm) }, m)
	firsts := 0
	src.onFirst = func() { firsts++ }
	for i := range ph.frames {
		if src.protectedAt(i * rtc.PCMFrame) {
			t.Fatalf("frame %d protected from barge-in", i)
		}
		pkt, err := src.NextOpus()
		if err != nil || !bytes.Equal(pkt, ph.frames[i]) {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if _, err := src.NextOpus(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
	if tapped != len(ph.pcm) || firsts != 1 {
		t.Fatalf("tapped %d samples of %d, onFirst %d times", tapped, len(ph.pcm), firsts)
	}
	if got := counterValue(t, m.framesCached); got != float64(len(ph.frames)) {
		t.Fatalf("cached frames counted %v, want %d", got, len(ph.frames))
	}
	if src.heard(len(ph.pcm)) != "" || src.heard(len(ph.pcm)/2) != "" {
		t.Fatal("the phrase counts as reply text")
	}
	// The shared PCM is capped: appending copies.
	src.write([]int16{1, 2, 3})
	if len(ph.pcm) != cap(ph.pcm) {
		t.Fatal("shared phrase PCM has spare capacity")
	}
}

// TestNoticeSpokenFromCache: over real peers, two sessions each get the AI
// disclosure as an event and in speech; the first synthesises it, the
// second plays the very same Opus packets from the cache, and no frame of
// it is encoded per session.
func TestNoticeSpokenFromCache(t *testing.T) {
	scfg := session.DefaultConfig()
	scfg.Disclosure = "You are talking with VERA, an AI companion."
	st := newStack(t, stackOptions{sessCfg: &scfg})
	stream := encode(t, fixtures.Silence(16000, 6*time.Second))
	noticeDone := func(evs []fixtures.Event) bool {
		for _, e := range ofType(evs, "reply.audio_stopped") {
			if decode(t, e).TurnID == "notice" {
				return true
			}
		}
		return false
	}
	var played [2][][]byte
	for i := range played {
		res := runScenario(t, st, stream, noticeDone, 60*time.Second)
		ns := ofType(res.Events, "notice")
		if len(ns) != 1 || decode(t, ns[0]).Text != scfg.Disclosure {
			t.Fatalf("session %d: notice events %v", i, ns)
		}
		var started, stopped time.Time
		for _, e := range res.Events {
			if p := decode(t, e); p.TurnID == "notice" {
				switch e.Type {
				case "reply.audio_started":
					started = e.At
				case "reply.audio_stopped":
					stopped = e.At
				}
			}
		}
		if started.IsZero() || stopped.Before(started) {
			t.Fatalf("session %d: notice audio started %v stopped %v\n%s", i, started, stopped, dumpEvents(res.Events))
		}
		for _, p := range res.Audio {
			played[i] = append(played[i], p.Payload)
		}
	}
	if len(played[0]) < 50 {
		t.Fatalf("first session got %d audio packets, want the spoken notice (≥ 1 s)", len(played[0]))
	}
	if len(played[0]) != len(played[1]) {
		t.Fatalf("sessions got %d and %d notice packets", len(played[0]), len(played[1]))
	}
	for k := range played[0] {
		if !bytes.Equal(played[0][k], played[1][k]) {
			t.Fatalf("packet %d differs between the sessions: not the shared encoding", k)
		}
	}
	if hit, miss := counterValue(t, st.metrics.PhraseCache.WithLabelValues("hit")), counterValue(t, st.metrics.PhraseCache.WithLabelValues("miss")); hit != 1 || miss != 1 {
		t.Fatalf("phrase cache hits %v misses %v, want 1 and 1", hit, miss)
	}
	if enc, cached := counterValue(t, st.metrics.framesEncoded), counterValue(t, st.metrics.framesCached); enc != 0 || cached != float64(2*len(played[0])) {
		t.Fatalf("frames encoded %v cached %v, want 0 and %d", enc, cached, 2*len(played[0]))
	}
	var setup dto.Metric
	if err := st.metrics.SessionSetup.Write(&setup); err != nil || setup.GetHistogram().GetSampleCount() != 2 {
		t.Fatalf("session setup observations %d (%v), want 2", setup.GetHistogram().GetSampleCount(), err)
	}
	// The echo guard heard the phrase as the gateway's own voice.
	st.mu.Lock()
	v := st.voices[1]
	st.mu.Unlock()
	if loud := v.in.EchoReferenceSlots(); loud < 20 {
		t.Fatalf("echo reference has %d sounding slots, want the notice's", loud)
	}
}
