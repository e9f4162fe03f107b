package jitter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// seqDec decodes the simulator's payloads: a TOC byte, an FEC flag byte,
// a 4-byte packet index and a level byte (0 quiet, else loud), and records
// which packet each Pull produced.
type seqDec struct {
	last  int64 // index of the packet decoded or recovered by the last call; -1 for PLC
	level int16
}

func (*seqDec) FrameSamples() int { return 320 }
func (d *seqDec) DecodeFrame(p []byte, pcm []int16) error {
	d.last = int64(binary.BigEndian.Uint32(p[2:6]))
	lv := int16(20)
	if p[6] != 0 {
		lv = 8000
	}
	for i := range pcm {
		pcm[i] = lv * int16(1-2*(i&1))
	}
	return nil
}
func (d *seqDec) ConcealFrame(pcm []int16) error {
	d.last = -1
	clear(pcm)
	return nil
}
func (d *seqDec) RecoverFrame(p []byte, pcm []int16) error {
	d.last = int64(binary.BigEndian.Uint32(p[2:6])) - 1
	clear(pcm)
	return nil
}

// netCond is one simulated network: uniform [0, jitter) delay per packet,
// random loss, and optional stalls (the sender or the path freezes for
// stallMs every stallEvery packets, then delivers the backlog at once, as a
// loaded machine does).
type netCond struct {
	name       string
	jitterMs   float64
	lossPct    float64
	stallMs    float64
	stallEvery int // 0: one stall at packet stallAt (if stallMs > 0)
	stallAt    int
}

// playout is the outcome of one simulated stream.
type playout struct {
	delays    []float64 // ms from a packet's send time to the Pull that played it
	played    []int64   // packet index of each decoded frame, in play order
	frames    int       // pulls after the first packet
	concealed int       // pulls that played PLC or silence where no packet was lost
	lost      int       // packets the network dropped
	dropped   int       // frames skipped to shrink the delay (Stats.Skipped)
}

const simFrame = 960 // 20 ms at 48 kHz

// simulate plays n packets of a talk-spurt pattern (1.5 s loud, 0.5 s quiet)
// through a buffer with cfg, pulling every 20 ms at a random phase.
func simulate(tb testing.TB, cfg Config, c netCond, n int, seed uint64) playout {
	tb.Helper()
	dec := &seqDec{}
	b, err := New(cfg, dec)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	type arrival struct {
		at  int64
		idx int
	}
	var arr []arrival
	var out playout
	stallUntil := int64(-1)
	for k := range n {
		send := int64(k) * simFrame
		if (c.stallEvery > 0 && k > 0 && k%c.stallEvery == 0) || (c.stallEvery == 0 && c.stallMs > 0 && k == c.stallAt) {
			stallUntil = send + int64(c.stallMs*48)
		}
		at := send + int64(r.Float64()*c.jitterMs*48)
		if at < stallUntil {
			at = stallUntil
		}
		if r.Float64()*100 < c.lossPct {
			out.lost++
			continue
		}
		arr = append(arr, arrival{at, k})
	}
	sort.SliceStable(arr, func(i, j int) bool { return arr[i].at < arr[j].at })
	phase := int64(r.IntN(simFrame))
	pcm := make([]int16, 320)
	payload := make([]byte, 7)
	payload[0] = 0x08 // no FEC: each lost packet costs exactly one concealed frame
	ai := 0
	started := false
	end := int64(n+20) * simFrame
	for pull := phase; pull < end; pull += simFrame {
		for ai < len(arr) && arr[ai].at <= pull {
			k := arr[ai].idx
			binary.BigEndian.PutUint32(payload[2:6], uint32(k))
			payload[6] = 0
			if k%100 < 75 {
				payload[6] = 1
			}
			if err := b.Push(uint16(k), uint32(k*simFrame), payload, arr[ai].at); err != nil {
				tb.Fatal(err)
			}
			ai++
		}
		if ai == 0 {
			continue // nothing sent yet
		}
		dec.last = -2
		kind, err := b.Pull(pcm)
		if err != nil {
			tb.Fatal(err)
		}
		out.frames++
		switch {
		case kind == Decoded:
			started = true
			out.delays = append(out.delays, float64(pull-dec.last*simFrame)/48)
			out.played = append(out.played, dec.last)
		case started && ai < len(arr):
			out.concealed++ // PLC or silence while the stream is still coming
		}
	}
	st := b.Stats()
	out.concealed -= out.lost
	out.dropped = int(st.Skipped)
	return out
}

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

var playoutConds = []netCond{
	{name: "clean (0.5 ms jitter)", jitterMs: 0.5},
	{name: "jitter 5 ms", jitterMs: 5},
	{name: "jitter 30 ms", jitterMs: 30},
	{name: "jitter 60 ms", jitterMs: 60},
	{name: "loss 5 %", jitterMs: 0.5, lossPct: 5},
	{name: "loss 10 % + jitter 30 ms", jitterMs: 30, lossPct: 10},
	{name: "stall 100 ms every 5 s", jitterMs: 0.5, stallMs: 100, stallEvery: 250},
	{name: "stall 60 ms every 2 s + jitter 5 ms", jitterMs: 5, stallMs: 60, stallEvery: 100},
}

// BenchmarkPlayoutDelay simulates 60 s streams (8 seeds each) through the
// buffer and reports, per network condition, the playout delay (packet
// send → the Pull that plays it) p50/p95 and the concealed frames not
// caused by loss (late packets, underruns). Run with -benchtime 1x -v.
func BenchmarkPlayoutDelay(b *testing.B) {
	fixed := DefaultConfig()
	fixed.Adaptive, fixed.TargetDelayMs = false, 60
	noShrink := DefaultConfig()
	noShrink.ShrinkWindowMs = 0
	cfgs := []struct {
		name string
		cfg  Config
	}{{"fixed-60ms", fixed}, {"no-shrink", noShrink}, {"default", DefaultConfig()}}
	for b.Loop() {
		for _, c := range playoutConds {
			for _, cf := range cfgs {
				var all playout
				for seed := range uint64(8) {
					p := simulate(b, cf.cfg, c, 3000, seed)
					all.delays = append(all.delays, p.delays...)
					all.frames += p.frames
					all.concealed += p.concealed
					all.lost += p.lost
					all.dropped += p.dropped
				}
				b.Logf("%-36s %-12s delay p50 %5.1f p95 %5.1f ms  concealed (not lost) %5.2f %%  skipped %d",
					c.name, cf.name, quantile(all.delays, 0.5), quantile(all.delays, 0.95),
					100*float64(all.concealed)/float64(all.frames), all.dropped)
				if c.name == playoutConds[0].name {
					b.ReportMetric(quantile(all.delays, 0.5), fmt.Sprintf("%s-clean-p50-ms", cf.name))
				}
			}
		}
	}
}

// quietPacket says whether the simulator's packet k carries a quiet frame.
func quietPacket(k int64) bool { return k%100 >= 75 }

// A clean stream is played at the first pull after each packet arrives:
// no added delay beyond the pull phase, nothing concealed or skipped.
func TestCleanStreamNearZeroDelay(t *testing.T) {
	for seed := range uint64(4) {
		p := simulate(t, DefaultConfig(), netCond{jitterMs: 0.5}, 1500, seed)
		if p.concealed != 0 || p.dropped != 0 || len(p.played) != 1500 {
			t.Fatalf("seed %d: concealed %d skipped %d played %d of 1500", seed, p.concealed, p.dropped, len(p.played))
		}
		if mx := quantile(p.delays, 1); mx > 20.5 {
			t.Fatalf("seed %d: delay up to %.1f ms, want at most one frame plus the jitter", seed, mx)
		}
	}
}

// After a one-off 100 ms stall the delay it added drains back to the clean
// level by skipping frames, only quiet ones, each packet otherwise played
// once and in order; with shrinking off it stays.
func TestStallDrainsBack(t *testing.T) {
	stall := netCond{jitterMs: 0.5, stallMs: 100, stallAt: 200}
	for seed := range uint64(4) {
		p := simulate(t, DefaultConfig(), stall, 2000, seed)
		if len(p.played)+p.dropped+p.concealed < 2000 {
			t.Fatalf("seed %d: played %d + skipped %d + concealed %d < 2000 packets", seed, len(p.played), p.dropped, p.concealed)
		}
		var skipped []int64
		for i := 1; i < len(p.played); i++ {
			if p.played[i] <= p.played[i-1] {
				t.Fatalf("seed %d: packet %d played after %d", seed, p.played[i], p.played[i-1])
			}
			for k := p.played[i-1] + 1; k < p.played[i]; k++ {
				skipped = append(skipped, k)
			}
		}
		for _, k := range skipped {
			if !quietPacket(k) {
				t.Errorf("seed %d: skipped loud packet %d", seed, k)
			}
		}
		if len(skipped) == 0 || len(skipped) != p.dropped {
			t.Fatalf("seed %d: skipped %v, Stats.Skipped %d", seed, skipped, p.dropped)
		}
		// 20 s after the stall (packet 1200 on) the delay is back to one frame.
		if mx := quantile(p.delays[1200-len(skipped):], 1); mx > 20.5 {
			t.Fatalf("seed %d: delay still up to %.1f ms 20 s after the stall", seed, mx)
		}
		off := DefaultConfig()
		off.ShrinkWindowMs = 0
		q := simulate(t, off, stall, 2000, seed)
		if mn := quantile(q.delays[1200:], 0); mn < 80 || q.dropped != 0 {
			t.Fatalf("seed %d: without shrinking the delay fell to %.1f ms (%d skipped)", seed, mn, q.dropped)
		}
	}
}
