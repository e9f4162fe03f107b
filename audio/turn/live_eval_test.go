package turn_test

// The receive path end to end on one clock, without scheduling noise: each
// 20 ms of the canvas is Opus-encoded and "sent" when the microphone would
// have captured it (at the end of its 20 ms), delayed, lost or stalled by a
// seeded network model, pushed into the jitter buffer on arrival, pulled every
// 20 ms at a random phase, decoded at 16 kHz and run through the VAD and the
// turn detector. A SpeechStopped is decided at the pull that produced it, so
// the delay measured from the true end of speech includes packetisation, the
// network, the jitter buffer's playout delay, frame granularity and the
// detector: everything in the gateway's media path but CPU scheduling.

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

const (
	frame16  = audio.Frame20                     // 20 ms at 16 kHz
	ticks20  = audio.OpusFrame20                 // 20 ms at 48 kHz (RTP clock)
	ticksPer = audio.OpusRate / audio.SampleRate // 48 kHz ticks per 16 kHz sample
)

// network is a seeded impairment: uniform [0, jitterMs) delay per packet,
// random loss, and a stall of stallMs every stallEvery packets (the path or
// a loaded machine freezes, then delivers the backlog at once).
type network struct {
	name       string
	jitterMs   float64
	lossPct    float64
	stallMs    float64
	stallEvery int
}

// liveVariant is one configuration of the three stages.
type liveVariant struct {
	name string
	// aligned pulls on the send grid (phase 0): what processing each packet
	// as it arrives would give on a clean path; otherwise a random phase.
	aligned bool
	jit     jitter.Config
	vad     vad.Config
	turn    turn.Config
}

type arrival struct {
	at int64 // 48 kHz ticks
	k  int
}

// encodeCanvas Opus-encodes pcm in 20 ms packets (16 kHz input, FEC on).
func encodeCanvas(tb testing.TB, pcm []int16) [][]byte {
	tb.Helper()
	cfg := codec.DefaultConfig()
	cfg.EncodeRate = audio.SampleRate
	enc, err := codec.NewEncoder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var pkts [][]byte
	for k := 0; (k+1)*frame16 <= len(pcm); k++ {
		p, err := enc.EncodeAppend(nil, pcm[k*frame16:(k+1)*frame16])
		if err != nil {
			tb.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// arrivals applies the network to packets sent at the end of their 20 ms.
func arrivals(n int, nw network, seed uint64) []arrival {
	r := rand.New(rand.NewPCG(seed, 5))
	var out []arrival
	stallUntil := int64(-1)
	for k := range n {
		send := int64(k+1) * ticks20
		if nw.stallEvery > 0 && k > 0 && k%nw.stallEvery == 0 {
			stallUntil = send + int64(nw.stallMs*48)
		}
		at := send + int64(r.Float64()*nw.jitterMs*48)
		at = max(at, stallUntil)
		if r.Float64()*100 < nw.lossPct {
			continue
		}
		out = append(out, arrival{at, k})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// runLive plays the packets through the inbound pipeline (jitter buffer,
// decoder, VAD and detector) and returns the detected turns in canvas
// sample time: start and end are mapped from the detector's sample clock to
// the sender's by the playout offset at the decision, at is the decision's
// wall time.
func runLive(tb testing.TB, pkts [][]byte, arr []arrival, v liveVariant, phase int64) []detected {
	tb.Helper()
	cfg := pipeline.DefaultConfig()
	cfg.Jitter, cfg.VAD, cfg.Turn, cfg.EchoGuard = v.jit, v.vad, v.turn, false
	in, err := pipeline.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var out []detected
	ai := 0
	end := int64(len(pkts)+50) * ticks20
	for pull := phase; pull < end; pull += ticks20 {
		for ai < len(arr) && arr[ai].at <= pull {
			k := arr[ai].k
			if err := in.Push(uint16(k), uint32(k*ticks20), pkts[k], arr[ai].at); err != nil {
				tb.Fatal(err)
			}
			ai++
		}
		pcm, _, err := in.Pull()
		if err != nil {
			tb.Fatal(err)
		}
		at := pull / ticksPer // the pull's wall time in 16 kHz samples
		in.Analyse(pcm, at, false, func(e *turn.Event) {
			if e.Type != turn.SpeechStopped {
				return
			}
			off := at - in.Now()
			out = append(out, detected{start: e.SpeechStart + off, end: e.SpeechEnd + off, at: at})
		})
	}
	return out
}

// BenchmarkEndOfTurnLive reports, per network and variant, the delay from
// the true end of speech plus the configured silence to the pull that
// decides SpeechStopped, through Opus, the jitter buffer, the VAD and the
// detector (see the file comment), with turn counts. Run with -benchtime 1x -v.
func BenchmarkEndOfTurnLive(b *testing.B) {
	before := liveVariant{"before", false, jitter.DefaultConfig(), vad.DefaultConfig(), turn.DefaultConfig()}
	before.jit.ShrinkWindowMs, before.vad.RawFloorDb, before.turn.EndRunMs = 0, 0, 0
	after := liveVariant{"after", false, jitter.DefaultConfig(), vad.DefaultConfig(), turn.DefaultConfig()}
	aligned := after
	aligned.name, aligned.aligned = "after+aligned-pull", true
	vars := []liveVariant{before, after, aligned}
	nets := []network{
		{name: "clean"},
		{name: "jitter 30 ms", jitterMs: 30},
		{name: "jitter 60 ms", jitterMs: 60},
		{name: "loss 5 %", lossPct: 5},
		{name: "loss 10 % + jitter 30 ms", lossPct: 10, jitterMs: 30},
		{name: "stall 100 ms every 4 s", stallMs: 100, stallEvery: 200},
	}
	silence := int64(after.turn.SilenceDurationMs) * rate / 1000
	espeak := espeakClips(b, silence, 4)
	real := realClips(b, silence)
	type set struct {
		clips []clip
		cond  condition
	}
	sets := []set{{espeak, condition{snr: -1}}, {espeak, condition{"pink", 30}}, {real, condition{"noise_city_street", 30}}}
	for b.Loop() {
		res := map[string]*tally{}
		for _, s := range sets {
			var noise []int16
			if s.cond.snr >= 0 {
				noise = noiseSource(b, s.cond.noise)
			}
			for ci, c := range s.clips {
				pcm, lead := c.canvas(b, s.cond, noise)
				pkts := encodeCanvas(b, pcm)
				for ni, nw := range nets {
					seed := uint64(ci*31 + ni)
					arr := arrivals(len(pkts), nw, seed)
					phase := int64(rand.New(rand.NewPCG(seed, 3)).IntN(ticks20))
					for _, v := range vars {
						ph := phase
						if v.aligned {
							ph = 0
						}
						det := runLive(b, pkts, arr, v, ph)
						for _, key := range []string{v.name + "|" + nw.name + "|" + c.set, v.name + "|" + nw.name + "|all"} {
							if res[key] == nil {
								res[key] = &tally{}
							}
							res[key].score(c, lead, det, silence, s.cond.String())
						}
					}
				}
			}
		}
		for _, nw := range nets {
			for _, v := range vars {
				for _, set := range []string{"espeak", "real-forced", "real-energy", "all"} {
					if t := res[v.name+"|"+nw.name+"|"+set]; t != nil {
						b.Logf("%-26s %-18s %-12s %s", nw.name, v.name, set, t)
					}
				}
				if t := res[v.name+"|"+nw.name+"|all"]; t != nil && nw.name == "clean" {
					b.ReportMetric(pct(t.delays, 0.5), fmt.Sprintf("%s-clean-p50-ms", v.name))
				}
			}
		}
	}
}
