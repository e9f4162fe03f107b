//go:build !noembedded

package sphinx

import (
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/fixtures"
)

// liveTurns cuts pcm (16 kHz mono) into the turns the live voice path
// would hand the recogniser: Opus-encoded as a client sends it (24 kb/s,
// FEC), through the gateway's inbound pipeline (jitter buffer, decode, VAD,
// turn detector) with its default configuration, each turn starting with
// the detector's prefix padding, as gateway/voice feeds its listen session.
// Packets arrive on time and nothing plays out, so there is no barge-in.
func liveTurns(t testing.TB, pcm []int16) [][]int16 {
	t.Helper()
	st, err := fixtures.Encode(&fixtures.Audio{Rate: audio.SampleRate, Samples: pcm}, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.DefaultConfig()
	cfg.Codec = codec.DefaultConfig()
	cfg.Codec.DecodeRate = audio.SampleRate
	in, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var turns [][]int16
	var cur []int16
	open := false
	emit := func(ev *turn.Event) {
		switch ev.Type {
		case turn.SpeechStarted:
			open, cur = true, nil
			for _, f := range in.Prefix(in.Now() - ev.AudioStart) {
				cur = append(cur, f...)
			}
		case turn.SpeechStopped:
			if open {
				turns = append(turns, cur)
			}
			open, cur = false, nil
		}
	}
	step := func(at int64) {
		f, _, err := in.Pull()
		if err != nil {
			t.Fatal(err)
		}
		in.Analyse(f, at, false, emit)
		if open {
			cur = append(cur, f...)
		}
	}
	var at int64
	for _, p := range st.Packets {
		if err := in.Push(p.Seq, p.Timestamp, p.Payload, int64(p.Timestamp)); err != nil {
			t.Fatal(err)
		}
		step(at)
		at += audio.Frame20
	}
	// Drain the jitter buffer, then close a turn still open.
	for range 20 {
		step(at)
		at += audio.Frame20
	}
	in.EndOfStream(emit)
	if open {
		turns = append(turns, cur)
	}
	return turns
}
