package pipeline_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// speech48k is the project's espeak utterance at 48 kHz followed by one
// second of silence, so a turn can end.
func speech48k(t testing.TB) []int16 {
	t.Helper()
	speech, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.48k.wav", audio.OpusRate)
	if err != nil {
		t.Fatal(err)
	}
	return append(speech, make([]int16, audio.OpusRate)...)
}

// encode cuts pcm (48 kHz) into 20 ms Opus packets with the default
// encoder (FEC on).
func encode(t testing.TB, pcm []int16) [][]byte {
	t.Helper()
	enc, err := codec.NewEncoder(codec.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var pkts [][]byte
	for i := 0; i+audio.OpusFrame20 <= len(pcm); i += audio.OpusFrame20 {
		p, err := enc.EncodeAppend(nil, pcm[i:i+audio.OpusFrame20])
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// TestReceivePipeline runs the live receive path on the project's espeak
// speech: Opus encode (48 kHz, FEC) → RTP with 5 % loss and reordering →
// jitter buffer → decode to 16 kHz → VAD per 10 ms → turn detector. It must
// find the turns covering the utterance, and hand over their audio.
func TestReceivePipeline(t *testing.T) {
	pkts := encode(t, speech48k(t))
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	order := make([]int, len(pkts))
	for i := range order {
		order[i] = i
	}
	for i := 0; i+1 < len(order); i += 7 { // swap neighbours now and then
		order[i], order[i+1] = order[i+1], order[i]
	}
	var events []turn.Event
	next := 0
	for tick := 0; tick < len(pkts)+10; tick++ {
		// The network delivers the packets due by this tick.
		for next < len(order) && order[next] <= tick {
			i := order[next]
			next++
			if r.IntN(20) == 0 && i > 2 {
				continue // lost
			}
			if err := in.Push(uint16(60000+i), uint32(1<<31+i*audio.OpusFrame20), pkts[i], int64(tick*audio.OpusFrame20)); err != nil {
				t.Fatal(err)
			}
		}
		pcm, _, err := in.Pull()
		if err != nil {
			t.Fatal(err)
		}
		in.Analyse(pcm, int64(tick*audio.Frame20), false, func(e *turn.Event) {
			c := *e
			c.Audio = append([]int16(nil), e.Audio...)
			events = append(events, c)
		})
	}
	st := in.Stats()
	if st.Lost == 0 || st.Recovered == 0 || st.Decoded+st.Late < uint64(len(pkts)*9/10) {
		t.Fatalf("jitter stats %+v", st)
	}
	var starts, stops []turn.Event
	for _, e := range events {
		switch e.Type {
		case turn.SpeechStarted:
			starts = append(starts, e)
		case turn.SpeechStopped:
			stops = append(stops, e)
		}
	}
	if len(starts) < 1 || len(stops) != len(starts) {
		t.Fatalf("starts %d stops %d: %+v", len(starts), len(stops), events)
	}
	// The espeak clip has 0.3 s of leading silence and ~4.5 s of speech
	// (plus the jitter buffer's delay); the turns must cover most of it.
	var covered int64
	for _, s := range stops {
		covered += s.SpeechEnd - s.SpeechStart
		if int64(len(s.Audio)) != s.SpeechEnd-s.AudioStart {
			t.Fatalf("turn audio %d samples, want %d", len(s.Audio), s.SpeechEnd-s.AudioStart)
		}
	}
	if covered < 3*audio.SampleRate {
		t.Fatalf("turns cover %d ms of ~4500 ms of speech: %+v", covered/16, stops)
	}
}

// speech16k is the project's espeak utterance at audio.SampleRate.
func speech16k(t testing.TB) []int16 {
	t.Helper()
	pcm, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.16k.wav", audio.SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// TestPrefixAtSpeechStarted: at SpeechStarted the ring holds the frames
// before the one being analysed that cover the turn's padded start, and
// they are the audio that was analysed.
func TestPrefixAtSpeechStarted(t *testing.T) {
	pcm := append(make([]int16, audio.SampleRate), speech16k(t)...)
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got [][]int16
	started, want := -1, 0
	for k := 0; (k+1)*audio.Frame20 <= len(pcm) && started < 0; k++ {
		in.Analyse(pcm[k*audio.Frame20:(k+1)*audio.Frame20], int64(k*audio.Frame20), false, func(e *turn.Event) {
			if e.Type != turn.SpeechStarted {
				return
			}
			started = k
			samples := in.Now() - e.AudioStart
			want = min(int((samples+audio.Frame20-1)/audio.Frame20), 32, k)
			for _, f := range in.Prefix(samples) {
				got = append(got, append([]int16(nil), f...))
			}
		})
	}
	if started < 0 {
		t.Fatal("no SpeechStarted")
	}
	if len(got) != want || want < 10 {
		t.Fatalf("%d prefix frames, want %d (300 ms padding and more)", len(got), want)
	}
	for i, f := range got {
		off := (started - len(got) + i) * audio.Frame20
		for j := range f {
			if f[j] != pcm[off+j] {
				t.Fatalf("prefix frame %d differs from the audio at %d", i, off)
			}
		}
	}
}

// TestEndOfStream: a file that ends mid-turn still yields its SpeechStopped.
func TestEndOfStream(t *testing.T) {
	speech := speech16k(t)
	pcm := append(make([]int16, audio.SampleRate/2), speech[:len(speech)*2/3]...)
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var stops int
	count := func(e *turn.Event) {
		if e.Type == turn.SpeechStopped {
			stops++
		}
	}
	for k := 0; (k+1)*audio.Frame10 <= len(pcm); k++ {
		in.Analyse(pcm[k*audio.Frame10:(k+1)*audio.Frame10], int64(k*audio.Frame10), false, count)
	}
	before := stops
	in.EndOfStream(count)
	if stops != before+1 {
		t.Fatalf("EndOfStream closed %d turns, want 1 (before: %d)", stops-before, before)
	}
	in.EndOfStream(count)
	if stops != before+1 {
		t.Fatal("EndOfStream on an idle detector emitted")
	}
}

// TestEchoGuard: the gateway's own speech leaking back 10-20 dB down and
// 60-200 ms late raises barge-ins without the guard and none with it;
// Reference's slots line up with Analyse's on the one media clock.
func TestEchoGuard(t *testing.T) {
	out := speech16k(t)
	const lead = audio.SampleRate / 2
	run := func(guard bool, gainDb float64, delay int) (overlaps, runs, slots int) {
		cfg := pipeline.DefaultConfig()
		cfg.EchoGuard = guard
		in, err := pipeline.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g := math.Pow(10, gainDb/20)
		rng := rand.New(rand.NewPCG(uint64(delay), 3))
		total := (lead + len(out) + audio.SampleRate) / audio.Frame20 * audio.Frame20
		input := make([]int16, total)
		for i := range input {
			x := rng.NormFloat64() * 10 // noise floor about -70 dBFS
			if j := i - lead - delay; j >= 0 && j < len(out) {
				x += g * float64(out[j])
			}
			input[i] = int16(max(-32768, min(32767, math.Round(x))))
		}
		ref := make([]int16, audio.Frame20)
		for k := 0; (k+1)*audio.Frame20 <= total; k++ {
			at := int64(k * audio.Frame20)
			o := k*audio.Frame20 - lead
			playing := o >= 0 && o < len(out)
			if playing {
				clear(ref)
				copy(ref, out[o:min(o+audio.Frame20, len(out))])
				in.Reference(at+audio.Frame10, ref) // its last 10 ms goes out in the frame's second half
			}
			in.Analyse(input[k*audio.Frame20:(k+1)*audio.Frame20], at, playing, func(e *turn.Event) {
				if e.Type == turn.OverlapSpeech {
					overlaps++
				}
			})
		}
		return overlaps, in.EchoRuns(), in.EchoReferenceSlots()
	}
	var without, with int
	for _, gain := range []float64{-10, -20} {
		for _, delayMs := range []int{60, 120, 200} {
			wo, _, noSlots := run(false, gain, delayMs*audio.SampleRate/1000)
			wi, runs, slots := run(true, gain, delayMs*audio.SampleRate/1000)
			without += wo
			with += wi
			if wi > 0 {
				t.Errorf("echo at %v dB, %d ms: %d barge-ins with the guard (%d echo runs)", gain, delayMs, wi, runs)
			}
			if slots < 20 || noSlots != 0 {
				t.Errorf("reference slots %d with the guard, %d without", slots, noSlots)
			}
		}
	}
	if without == 0 {
		t.Error("no false barge-in even without the guard: the test shows nothing")
	}
	t.Logf("false barge-ins over 6 mixes: %d without the guard, %d with", without, with)
}

// TestPushPullConcurrent: the network goroutine pushes while the media
// loop pulls (run with -race).
func TestPushPullConcurrent(t *testing.T) {
	pkts := encode(t, speech48k(t))
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i, p := range pkts {
			if err := in.Push(uint16(i), uint32(i*audio.OpusFrame20), p, int64(i*audio.OpusFrame20)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range pkts {
			in.Reference(0, make([]int16, audio.Frame20))
		}
	}()
	for k := range pkts {
		pcm, _, err := in.Pull()
		if err != nil {
			t.Fatal(err)
		}
		in.Analyse(pcm, int64(k*audio.Frame20), false, func(*turn.Event) {})
	}
	wg.Wait()
	if st := in.Stats(); st.Received == 0 {
		t.Fatalf("nothing received: %+v", st)
	}
}

// TestSteadyStateAllocs: a frame's push, pull and analysis allocate nothing.
func TestSteadyStateAllocs(t *testing.T) {
	pkts := encode(t, speech48k(t))
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	emit := func(*turn.Event) {}
	ref := make([]int16, audio.Frame20)
	frame := func() {
		if err := in.Push(uint16(k), uint32(k*audio.OpusFrame20), pkts[k%len(pkts)], int64(k*audio.OpusFrame20)); err != nil {
			t.Fatal(err)
		}
		pcm, _, err := in.Pull()
		if err != nil {
			t.Fatal(err)
		}
		in.Reference(int64(k*audio.Frame20+audio.Frame10), ref)
		in.Analyse(pcm, int64(k*audio.Frame20), true, emit)
		k++
	}
	for range 50 { // warm up: the turn buffer grows to its bound once
		frame()
	}
	if n := testing.AllocsPerRun(200, frame); n != 0 {
		t.Fatalf("%v allocations per frame", n)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := pipeline.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := pipeline.DefaultConfig()
	c.Codec.DecodeRate = audio.OpusRate
	if _, err := pipeline.New(c); !errors.Is(err, pipeline.ErrConfig) {
		t.Fatalf("48 kHz decode: %v", err)
	}
	c = pipeline.DefaultConfig()
	c.Turn.Threshold = 2
	if err := c.Validate(); !errors.Is(err, turn.ErrConfig) {
		t.Fatalf("bad turn threshold: %v", err)
	}
}

// BenchmarkInbound is the per-frame cost of the listening path: push, pull
// (jitter buffer and Opus decode to 16 kHz), VAD on both 10 ms halves, the
// echo guard and the turn detector. One op = one 20 ms frame.
func BenchmarkInbound(b *testing.B) {
	for _, c := range []struct {
		name           string
		guard, playing bool
	}{{"no_echo_guard", false, false}, {"echo_guard_idle", true, false}, {"echo_guard_playing", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			pkts := encode(b, speech48k(b))
			cfg := pipeline.DefaultConfig()
			cfg.EchoGuard = c.guard
			in, err := pipeline.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ref := make([]int16, audio.Frame20)
			for i := range ref {
				ref[i] = int16(3000 * math.Sin(float64(i)/5))
			}
			emit := func(*turn.Event) {}
			k := 0
			b.ReportAllocs()
			for b.Loop() {
				if err := in.Push(uint16(k), uint32(k*audio.OpusFrame20), pkts[k%len(pkts)], int64(k*audio.OpusFrame20)); err != nil {
					b.Fatal(err)
				}
				pcm, _, err := in.Pull()
				if err != nil {
					b.Fatal(err)
				}
				if c.playing {
					in.Reference(int64(k*audio.Frame20+audio.Frame10), ref)
				}
				in.Analyse(pcm, int64(k*audio.Frame20), c.playing, emit)
				k++
			}
		})
	}
}

// Example shows the per-stream wiring of the live path: push RTP payloads
// as they arrive, and on each 20 ms tick of the media clock pull one
// decoded frame and analyse it.
func Example() {
	in, _ := pipeline.New(pipeline.DefaultConfig())

	// On each RTP packet (arrival: audio.OpusTicks since the stream began):
	// in.Push(pkt.SequenceNumber, pkt.Timestamp, pkt.Payload, arrival)

	// On each 20 ms tick (at: the frame's place on the media clock):
	pcm, kind, _ := in.Pull()
	in.Analyse(pcm, 0, false, func(e *turn.Event) { fmt.Println(e.Type) })
	fmt.Println(kind)
	// Output: silence
}
