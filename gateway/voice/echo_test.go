package voice

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// echoReplies are replies of the kind the gateway speaks; the measurement
// plays each as the gateway's voice and leaks it back into the input.
var echoReplies = []string{
	"It sounds like you would like to go home. Who else knows about this?",
	"I hear you. Tell me a little more about what happened today, and we can think it through together.",
	"That is a good question. The lights in the kitchen are on a timer, so they switch off at ten.",
}

// synth speaks text through the router's speak slot at 16 kHz.
func synth(t testing.TB, text string) []int16 {
	t.Helper()
	r, _ := getShared(t)
	var pcm []int16
	_, err := r.Speak(context.Background(), router.SpeakRequest{Text: text, SampleRate: rtc.PCMRate, PCMOnly: true},
		func(c router.AudioChunk) error { pcm = append(pcm, c.PCM...); return nil })
	if err != nil {
		t.Fatalf("speak: %v", err)
	}
	return pcm
}

// echoMix is one offline run: the gateway plays out, the input carries its
// echo gainDb below what was played, delayMs late, over a faint noise floor,
// plus optional user speech starting userAt samples into the input.
type echoMix struct {
	out     []int16
	gainDb  float64
	delayMs int
	user    []int16
	userAt  int
	seed    uint64
}

// echoRun counts what the turn detector raises over the mix.
type echoRun struct {
	overlaps, starts, echoRuns int
}

const lead = 16000 / 2 // 500 ms of input before playout starts

func (m echoMix) run(t testing.TB, guard bool) echoRun {
	t.Helper()
	cfg := DefaultConfig()
	cfg.EchoGuard = guard
	in, err := newInbound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	frame := rtc.PCMFrame
	playFrames := (len(m.out) + frame - 1) / frame
	total := lead + playFrames*frame + 16000 // one second of tail
	if e := m.userAt + len(m.user); e > total {
		total = e + 16000
	}
	total = (total + frame - 1) / frame * frame
	delay := m.delayMs * 16
	gain := math.Pow(10, m.gainDb/20)
	rng := rand.New(rand.NewPCG(m.seed, 7))
	input := make([]int16, total)
	for i := range input {
		x := rng.NormFloat64() * 10 // noise floor about -70 dBFS
		if j := i - lead - delay; j >= 0 && j < len(m.out) {
			x += gain * float64(m.out[j])
		}
		if j := i - m.userAt; m.user != nil && j >= 0 && j < len(m.user) {
			x += float64(m.user[j])
		}
		input[i] = int16(max(-32768, min(32767, math.Round(x))))
	}
	var res echoRun
	ref := make([]int16, frame)
	for k := 0; k*frame < total; k++ {
		// The sender's tap: output frame k-lead/frame goes out now.
		o := k - lead/frame
		playing := o >= 0 && o < playFrames
		if playing {
			clear(ref)
			copy(ref, m.out[min(o*frame, len(m.out)):min((o+1)*frame, len(m.out))])
			in.Reference(int64(k*frame+audio.Frame10), ref) // its last 10 ms: the frame's second half
		}
		in.Analyse(input[k*frame:(k+1)*frame], int64(k*frame), playing, func(ev *turn.Event) {
			switch ev.Type {
			case turn.OverlapSpeech:
				res.overlaps++
			case turn.SpeechStarted:
				res.starts++
			}
		})
	}
	res.echoRuns = in.EchoRuns()
	return res
}

// TestEchoGuardOffline: the gateway's own voice leaking back at −10…−20 dB
// with 50–300 ms delay raises no barge-in with the echo guard, and a person
// speaking over that echo still does. The table is BENCHMARKS.md's ("Voice pipeline").
func TestEchoGuardOffline(t *testing.T) {
	var outs [][]int16
	for _, r := range echoReplies {
		outs = append(outs, synth(t, r))
	}
	user := fixture(t, "gohome.16k.wav").Samples
	var table strings.Builder
	fmt.Fprintf(&table, "| echo level | delay | mixes | false barge-ins without guard | with guard |\n|---|---|---|---|---|\n")
	var without, with, mixes int
	for _, gain := range []float64{-10, -15, -20} {
		for _, delay := range []int{50, 75, 100, 155, 200, 235, 300} {
			wo, wi := 0, 0
			for i, out := range outs {
				m := echoMix{out: out, gainDb: gain, delayMs: delay, seed: uint64(i)}
				a, b := m.run(t, false), m.run(t, true)
				wo += a.overlaps
				wi += b.overlaps
				if b.overlaps > 0 {
					t.Errorf("echo at %v dB, %d ms, reply %d: %d barge-ins with the guard", gain, delay, i, b.overlaps)
				}
			}
			mixes += len(outs)
			without += wo
			with += wi
			fmt.Fprintf(&table, "| %v dB | %d ms | %d | %d | %d |\n", gain, delay, len(outs), wo, wi)
		}
	}
	t.Logf("echo only:\n%s", table.String())
	if without == 0 {
		t.Errorf("no false barge-in even without the guard on %d mixes: the measurement shows nothing", mixes)
	}

	// A person talking over the echo still barges in.
	missed, runs := 0, 0
	for _, gain := range []float64{-10, -20} {
		for _, delay := range []int{50, 155, 300} {
			for i, out := range outs {
				m := echoMix{out: out, gainDb: gain, delayMs: delay, user: user, userAt: lead + 16000, seed: uint64(10 + i)}
				r := m.run(t, true)
				runs++
				if r.overlaps == 0 {
					missed++
					t.Errorf("user speech over echo at %v dB, %d ms, reply %d: no barge-in with the guard", gain, delay, i)
				}
			}
		}
	}
	t.Logf("echo-only mixes %d: false barge-ins %d without the guard, %d with; user over echo: %d/%d barge-ins detected",
		mixes, without, with, runs-missed, runs)
}
