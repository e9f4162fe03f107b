package voice

import (
	"context"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// benchPackets is a committed turn as Opus packets (looped by the benchmarks).
func benchPackets(b *testing.B) []fixtures.Packet {
	b.Helper()
	return encode(b, concat(b, fixture(b, "gohome.16k.wav"), fixtures.Silence(16000, time.Second))).Packets
}

// BenchmarkMediaFrame is the per-frame cost of the listening media path:
// jitter buffer push and pull, Opus decode at 16 kHz, VAD on both 10 ms
// halves, the echo guard and the turn detector. One op = one 20 ms frame.
func BenchmarkMediaFrame(b *testing.B) {
	for _, c := range []struct {
		name           string
		guard, playing bool
	}{{"no_echo_guard", false, false}, {"echo_guard_idle", true, false}, {"echo_guard_playing", true, true}} {
		guard, name := c.guard, c.name
		b.Run(name, func(b *testing.B) {
			pk := benchPackets(b)
			cfg := DefaultConfig()
			cfg.EchoGuard = guard
			in, err := newInbound(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ref := make([]int16, rtc.PCMFrame)
			for i := range ref {
				ref[i] = int16(3000 * math.Sin(float64(i)/5))
			}
			emit := func(*turn.Event) {}
			k := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				p := pk[int(k)%len(pk)]
				lap := k / int64(len(pk))
				seq := p.Seq + uint16(lap*int64(len(pk)))
				ts := p.Timestamp + uint32(lap*int64(len(pk))*audio.OpusFrame20)
				if err := in.Push(seq, ts, p.Payload, k*audio.OpusFrame20); err != nil {
					b.Fatal(err)
				}
				pcm, _, err := in.Pull()
				if err != nil {
					b.Fatal(err)
				}
				if c.playing {
					in.Reference(k*audio.Frame20+audio.Frame10, ref)
				}
				in.Analyse(pcm, k*audio.Frame20, c.playing, emit)
				k++
			}
		})
	}
}

// BenchmarkOpusDecodeFrame is the Opus decode alone, the yardstick of the
// issue's "listening session CPU ≤ 1.5 × (Opus decode + transport)".
func BenchmarkOpusDecodeFrame(b *testing.B) {
	pk := benchPackets(b)
	cfg := DefaultConfig()
	dec, err := codec.NewDecoder(cfg.Codec)
	if err != nil {
		b.Fatal(err)
	}
	var pcm [rtc.PCMFrame]int16
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.DecodeFrame(pk[k%len(pk)].Payload, pcm[:]); err != nil {
			b.Fatal(err)
		}
		k++
	}
}

// speechEnd is where the audio's last sound ends: the end of the last 10 ms
// above -45 dBFS (the label-free true end of speech of a fixture).
func speechEnd(a *fixtures.Audio) time.Duration {
	n := a.Rate / 100
	last := 0
	for i := 0; i+n <= len(a.Samples); i += n {
		if audio.PowerDBFS(a.Samples[i:i+n]) > -45 {
			last = i + n
		}
	}
	return time.Duration(last) * time.Second / time.Duration(a.Rate)
}

// BenchmarkEndOfTurnDelay plays each committed fixture over a real peer and
// measures, on the client's clock, input.speech_stopped minus the true end
// of speech minus the configured silence (turn.silence_duration_ms). It
// includes the client's pacing, the jitter buffer delay and the data
// channel. Reported: p50 and max over the runs, in ms. Run with -benchtime 1x.
func BenchmarkEndOfTurnDelay(b *testing.B) {
	if os.Getenv("VERA_BENCH_EOT") == "" && testing.Short() {
		b.Skip("real-peer benchmark")
	}
	st := newStack(b, stackOptions{})
	files := []string{"gohome.16k.wav", "lights.16k.wav", "crisis_kill.16k.wav", "crisis_end.16k.wav", "barge.16k.wav"}
	silence := time.Duration(DefaultConfig().Turn.SilenceDurationMs) * time.Millisecond
	var delays []float64
	for b.Loop() {
		for _, f := range files {
			// Two seconds of lead so the disclosure notice has played.
			clip := fixture(b, f)
			a := concat(b, fixtures.Silence(16000, 2*time.Second), clip, fixtures.Silence(16000, 1500*time.Millisecond))
			end := 2*time.Second + speechEnd(clip)
			var start time.Time
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			res, err := fixtures.Run(ctx, fixtures.Scenario{
				Client:      fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"},
				Stream:      encode(b, a),
				OnPlayStart: func(t time.Time) { start = t },
				Complete:    func(evs []fixtures.Event) bool { return len(ofType(evs, "input.speech_stopped")) > 0 },
			})
			cancel()
			if err != nil {
				b.Fatalf("%s: %v", f, err)
			}
			stops := ofType(res.Events, "input.speech_stopped")
			if len(stops) != 1 {
				b.Fatalf("%s: %d turns", f, len(stops))
			}
			d := stops[0].At.Sub(start.Add(end)) - silence
			delays = append(delays, float64(d)/float64(time.Millisecond))
		}
	}
	sort.Float64s(delays)
	b.ReportMetric(delays[len(delays)/2], "p50-ms")
	b.ReportMetric(delays[len(delays)-1], "max-ms")
	b.Logf("end-of-turn delay beyond the configured silence (ms, sorted): %.0f", delays)
}

// BenchmarkEndOfTurnDelayOffline is the detector's share of the end-of-turn
// delay: the same fixtures through VAD and the turn detector on sample time,
// no network, no jitter buffer. Reported: p50 and max of speech_stopped minus
// the true end of speech minus the configured silence, in ms.
func BenchmarkEndOfTurnDelayOffline(b *testing.B) {
	files := []string{"gohome.16k.wav", "lights.16k.wav", "crisis_kill.16k.wav", "crisis_end.16k.wav", "barge.16k.wav"}
	cfg := DefaultConfig()
	silence := time.Duration(cfg.Turn.SilenceDurationMs) * time.Millisecond
	var delays []float64
	for b.Loop() {
		delays = delays[:0]
		for _, f := range files {
			clip := fixture(b, f)
			a := concat(b, clip, fixtures.Silence(16000, 1500*time.Millisecond))
			cfg.EchoGuard = false
			in, err := newInbound(cfg)
			if err != nil {
				b.Fatal(err)
			}
			stop := int64(-1)
			for k := 0; (k+1)*rtc.PCMFrame <= len(a.Samples) && stop < 0; k++ {
				in.Analyse(a.Samples[k*rtc.PCMFrame:(k+1)*rtc.PCMFrame], int64(k*rtc.PCMFrame), false, func(ev *turn.Event) {
					if ev.Type == turn.SpeechStopped && stop < 0 {
						stop = ev.At
					}
				})
			}
			if stop < 0 {
				b.Fatalf("%s: no end of turn", f)
			}
			d := time.Duration(stop)*time.Second/16000 - speechEnd(clip) - silence
			delays = append(delays, float64(d)/float64(time.Millisecond))
		}
	}
	sort.Float64s(delays)
	b.ReportMetric(delays[len(delays)/2], "p50-ms")
	b.ReportMetric(delays[len(delays)-1], "max-ms")
	b.Logf("detector-only end-of-turn delay beyond the configured silence (ms, sorted): %.0f", delays)
}
