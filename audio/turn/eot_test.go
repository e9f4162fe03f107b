package turn_test

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// evalVariants: "before" is the detector as it was (no raw floor gate in the
// VAD, any single frame of raw evidence restarts the silence), then each
// change alone, then both (the defaults).
func evalVariants() []variant {
	mk := func(name string, floor float32, run int) variant {
		v, c := vad.DefaultConfig(), turn.FixedConfig()
		v.RawFloorDb, c.EndRunMs = floor, run
		return variant{name, v, c}
	}
	v, c := vad.DefaultConfig(), turn.FixedConfig()
	return []variant{mk("before", 0, 0), mk("floor-gate-only", v.RawFloorDb, 0), mk("end-run-only", 0, c.EndRunMs),
		mk("after", v.RawFloorDb, c.EndRunMs)}
}

// BenchmarkEndOfTurnEval prints, per variant, label set and condition, the
// end-of-turn delay beyond the configured silence (p50/p95), the back-dated
// end's error, and split/merge/missed/extra turn counts. Run with
// -benchtime 1x -v.
func BenchmarkEndOfTurnEval(b *testing.B) {
	vars := evalVariants()
	silence := int64(vars[0].turn.SilenceDurationMs) * rate / 1000
	for b.Loop() {
		res := map[string]*tally{}
		if err := evaluate(b, res, espeakClips(b, silence, 4), []condition{{snr: -1}, {"pink", 30}, {"pink", 10}}, vars); err != nil {
			b.Fatal(err)
		}
		if err := evaluate(b, res, realClips(b, silence), []condition{{snr: -1}, {"noise_city_street", 30}, {"noise_city_street", 10},
			{"noise_coffee_shop_babble", 20}, {"noise_wind", 20}}, vars); err != nil {
			b.Fatal(err)
		}
		keys := make([]string, 0, len(res))
		for k := range res {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.Logf("%-70s %s", k, res[k])
			if strings.HasSuffix(k, "|all|all") {
				b.Logf("   splits: %v", res[k].splitAt)
				b.Logf("   outliers: %v", res[k].late)
			}
		}
		for _, v := range vars {
			if t := res[v.name+"|all|all"]; t != nil {
				b.ReportMetric(pct(t.delays, 0.5), v.name+"-p50-ms")
				b.ReportMetric(float64(t.splits+t.merges), v.name+"-bad-turns")
			}
		}
	}
}

// feed runs probabilities (p, raw per 10 ms frame) through a detector and
// returns copies of its SpeechStopped events.
func feed(t *testing.T, cfg turn.Config, ps, raws []float32) []detected {
	t.Helper()
	d, err := turn.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, vad.FrameSamples)
	var out []detected
	for i := range ps {
		evs, err := d.ProcessRaw(frame, ps[i], raws[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == turn.SpeechStopped {
				out = append(out, detected{e.SpeechStart, e.SpeechEnd, e.At})
			}
		}
	}
	return out
}

// frames builds a per-10-ms sequence from (value, count) pairs.
func frames(parts ...any) []float32 {
	var out []float32
	for i := 0; i < len(parts); i += 2 {
		for range parts[i+1].(int) {
			out = append(out, float32(parts[i].(float64)))
		}
	}
	return out
}

const f10 = vad.FrameSamples

// The stop is decided exactly SilenceDurationMs after the last frame of raw
// speech evidence, however long the smoothed probability takes to fall.
func TestStopCountsFromRawEnd(t *testing.T) {
	cfg := turn.FixedConfig()
	silence := int64(cfg.SilenceDurationMs) * rate / 1000
	for _, tail := range []int{0, 5, 12, 30} { // frames the smoothed p stays above exit after raw ends
		ps := frames(0.0, 20, 0.95, 80, 0.6, tail, 0.1, 120)
		raws := frames(0.0, 20, 0.95, 80, 0.05, tail, 0.05, 120)
		got := feed(t, cfg, ps, raws)
		if len(got) != 1 {
			t.Fatalf("tail %d: %d turns, want 1", tail, len(got))
		}
		end := int64(100 * f10)
		if got[0].end != end || got[0].at != end+silence {
			t.Fatalf("tail %d: end %d at %d, want end %d at %d", tail, got[0].end, got[0].at, end, end+silence)
		}
	}
}

// Pauses shorter than the silence never end a turn, wherever they fall and
// whatever isolated blips they hold; a pause as long as the silence does.
func TestPausesShorterThanSilenceNeverSplit(t *testing.T) {
	cfg := turn.FixedConfig()
	for pause := 10; pause < cfg.SilenceDurationMs; pause += 10 {
		n := pause / 10
		ps := frames(0.0, 20, 0.95, 40, 0.2, n, 0.95, 40, 0.1, 80)
		raws := frames(0.0, 20, 0.95, 40, 0.1, n, 0.95, 40, 0.1, 80)
		// A one-frame raw blip in the middle of the pause changes nothing.
		raws[60+n/2] = 0.9
		if got := feed(t, cfg, ps, raws); len(got) != 1 || got[0].end != int64(100+n)*f10 {
			t.Fatalf("pause %d ms: turns %+v, want one ending at %d", pause, got, (100+n)*f10)
		}
	}
	n := cfg.SilenceDurationMs / 10
	ps := frames(0.0, 20, 0.95, 40, 0.2, n, 0.95, 40, 0.1, 80)
	if got := feed(t, cfg, ps, ps); len(got) != 2 {
		t.Fatalf("pause of the full silence: %d turns, want 2", len(got))
	}
}

// Noise or breath blips shorter than EndRunMs after the speech neither
// extend the turn nor move its end; a sustained run does extend it.
func TestBlipsDoNotExtendTurn(t *testing.T) {
	cfg := turn.FixedConfig()
	silence := int64(cfg.SilenceDurationMs) * rate / 1000
	// Smoothed p hovers between the thresholds (as in steady noise), raw
	// spikes for 30 ms every 150 ms.
	ps := frames(0.0, 20, 0.95, 80, 0.45, 150)
	raws := frames(0.0, 20, 0.95, 80, 0.1, 150)
	for i := 105; i < len(raws); i += 15 {
		raws[i], raws[i+1], raws[i+2] = 0.9, 0.9, 0.9
	}
	got := feed(t, cfg, ps, raws)
	end := int64(100 * f10)
	if len(got) != 1 || got[0].end != end {
		t.Fatalf("turns %+v: want one ending at %d", got, end)
	}
	// The decision waits for a run that started inside the silence to break
	// off (at most EndRunMs), never longer.
	if late := got[0].at - (end + silence); late < 0 || late > int64(cfg.EndRunMs)*rate/1000 {
		t.Fatalf("decided %d samples after end+silence", late)
	}
	// The same frames with EndRunMs 0 (every frame counts) keep the turn
	// open for as long as the blips go on.
	old := cfg
	old.EndRunMs = 0
	if got := feed(t, old, ps, raws); len(got) != 0 {
		t.Fatalf("end_run_ms 0: turns %+v, want the blips to hold the turn open", got)
	}
	// A 60 ms run is speech: it moves the end.
	raws = frames(0.0, 20, 0.95, 80, 0.1, 150)
	for i := 130; i < 136; i++ {
		raws[i] = 0.9
	}
	if got := feed(t, cfg, ps, raws); len(got) != 1 || got[0].end != 136*f10 {
		t.Fatalf("turns %+v: want the 60 ms run to end the speech at %d", got, 136*f10)
	}
}

// With real VAD on a synthetic voiced signal (a 140 Hz harmonic series with
// a syllable-rate envelope in pink noise at 30 dB) that stops at a known
// sample, the back-dated end lands within one 20 ms media frame after it:
// the frame holding the end, plus at most the next one, whose 16 ms
// analysis window still reaches 6 ms back into the speech.
func TestVADBackDatedEndOnSyntheticVoice(t *testing.T) {
	noise := noiseSource(t, "pink")
	for _, dur := range []int{600, 1137, 2071} {
		n := dur * rate / 1000
		sig := make([]int16, n)
		for i := range sig {
			tt := float64(i) / rate
			env := 0.6 + 0.4*math.Sin(2*math.Pi*4*tt)
			var v float64
			for h := 1; h <= 20; h++ {
				v += math.Sin(2*math.Pi*float64(h)*(140+10*math.Sin(2*math.Pi*3*tt))*tt) / float64(h)
			}
			sig[i] = int16(4000 * env * v)
		}
		c := clip{name: "synthetic", pcm: sig, turns: []span{{0, int64(n)}}, speechP: speechPower(sig, []span{{0, int64(n)}})}
		pcm, lead := c.canvas(t, condition{"pink", 30}, noise)
		got := detectTurns(t, pcm, vad.DefaultConfig(), turn.FixedConfig())
		if len(got) != 1 {
			t.Fatalf("%d ms: %d turns, want 1", dur, len(got))
		}
		trueEnd := lead + int64(n)
		if e := got[0].end - trueEnd; e < -f10 || e > 2*f10 {
			t.Fatalf("%d ms: back-dated end %d samples from the true end, want within [-10, +20] ms", dur, e)
		}
	}
}

// With the real VAD, espeak-ng turns whose phrases are separated by pauses
// of 120–360 ms (shorter than the silence) come out one turn each, in
// digital silence and in pink noise at 30 dB, decided no later than 20 ms
// after their true end plus the silence. A weak final consonant (a nasal, a
// soft fricative) can fall below the raw evidence, so a turn may end up to
// 100 ms early.
func TestEspeakTurnsWithPausesNotSplit(t *testing.T) {
	cfgV, cfgT := vad.DefaultConfig(), turn.FixedConfig()
	silence := int64(cfgT.SilenceDurationMs) * rate / 1000
	clips := espeakClips(t, silence, 2)
	res := map[string]*tally{}
	if err := evaluate(t, res, clips, []condition{{snr: -1}, {"pink", 30}}, []variant{{"default", cfgV, cfgT}}); err != nil {
		t.Fatal(err)
	}
	ty := res["default|all|all"]
	if ty.splits != 0 || ty.merges != 0 || ty.missed != 0 || len(ty.delays) != ty.expect {
		t.Fatalf("%s; splits at %v", ty, ty.splitAt)
	}
	for i, d := range ty.delays {
		if d < -100 || d > 20 {
			t.Errorf("turn %d ended %+.0f ms after its true end plus the silence, want within [-100, +20] ms", i, d)
		}
	}
}
