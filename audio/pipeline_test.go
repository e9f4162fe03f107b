package audio_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// TestReceivePipeline runs the live receive path on the project's espeak
// speech: Opus encode (48 kHz, FEC) → RTP with 5 % loss and reordering →
// jitter buffer → decode to 16 kHz → VAD per 10 ms → turn detector. It must
// find exactly one turn covering the utterance, and hand over its audio.
func TestReceivePipeline(t *testing.T) {
	speech, err := wavio.ReadWAVFile("../testdata/audio/speech_en.48k.wav", 48000)
	if err != nil {
		t.Fatal(err)
	}
	// One second of silence after the speech lets the turn end.
	speech = append(speech, make([]int16, 48000)...)
	ccfg := codec.DefaultConfig()
	enc, err := codec.NewEncoder(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	var pkts [][]byte
	for i := 0; i+960 <= len(speech); i += 960 {
		p, err := enc.EncodeAppend(nil, speech[i:i+960])
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}

	dec, err := codec.NewDecoder(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := jitter.New(jitter.DefaultConfig(), dec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vad.New(vad.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	det, err := turn.New(turn.DefaultConfig())
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
	pcm := make([]int16, audio.Frame20)
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
			if err := jb.Push(uint16(60000+i), uint32(1<<31+i*960), pkts[i], int64(tick*960)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := jb.Pull(pcm); err != nil {
			t.Fatal(err)
		}
		// The VAD takes 10 ms frames; the turn detector follows it.
		for h := 0; h < 2; h++ {
			fr := pcm[h*audio.Frame10 : (h+1)*audio.Frame10]
			p, f, err := v.ProcessFeatures(fr)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := det.ProcessRaw(fr, p, f.Raw)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				e.Audio = append([]int16(nil), e.Audio...)
				events = append(events, e)
			}
		}
	}
	st := jb.Stats()
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
	if covered < 3*16000 {
		t.Fatalf("turns cover %d ms of ~4500 ms of speech: %+v", covered/16, stops)
	}
}

// Example shows the per-stream wiring the live path uses: push RTP payloads
// as they arrive, pull one 20 ms frame per media-clock tick, and run VAD and
// turn detection on its two 10 ms halves.
func Example() {
	ccfg := codec.DefaultConfig()
	dec, _ := codec.NewDecoder(ccfg)
	jb, _ := jitter.New(jitter.DefaultConfig(), dec)
	v, _ := vad.New(vad.DefaultConfig())
	det, _ := turn.New(turn.DefaultConfig())

	// On each RTP packet (arrival in 48 kHz ticks of the media clock):
	// jb.Push(pkt.SequenceNumber, pkt.Timestamp, pkt.Payload, arrival)

	// On each 20 ms tick:
	pcm := make([]int16, audio.Frame20)
	kind, _ := jb.Pull(pcm)
	for h := 0; h < 2; h++ {
		fr := pcm[h*audio.Frame10 : (h+1)*audio.Frame10]
		p, f, _ := v.ProcessFeatures(fr)
		evs, _ := det.ProcessRaw(fr, p, f.Raw)
		for _, e := range evs {
			fmt.Println(e.Type)
		}
	}
	fmt.Println(kind)
	// Output: silence
}
