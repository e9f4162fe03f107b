package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// clip is one input of a load run, encoded once and shared read-only by
// every session: the file's audio padded with silence to the loop period.
type clip struct {
	name   string
	stream *fixtures.Stream // clean, pre-encoded; never mutated
	frames int              // 20 ms frames per pass (seq/ts advance per loop)
	turns  []span           // expected turns in frames, merged over short gaps
	// frameTurn maps a frame index to the turn it belongs to, or -1.
	frameTurn []int16
	labels    string // "segments.json", "energy" or "none"
}

// span is a turn in whole frames: [first, last].
type span struct{ first, last int }

// loadClips reads FILE or every DIR/NAME.16k.wav. Labels come from
// NAME.segments.json beside the WAV; without one, the span of frames above
// -40 dBFS stands in for the single spoken turn (espeak clips have digital
// silence around the words). An empty label list means "no speech": no turn
// is expected (the listening-only variant).
func loadClips(in string, period, minGap, mergeGap time.Duration) ([]*clip, error) {
	st, err := os.Stat(in)
	if err != nil {
		return nil, err
	}
	var paths []string
	if st.IsDir() {
		paths, err = filepath.Glob(filepath.Join(in, "*.16k.wav"))
		if err != nil {
			return nil, err
		}
		slices.Sort(paths)
		if len(paths) == 0 {
			return nil, fmt.Errorf("%s: no NAME.16k.wav files", in)
		}
	} else {
		paths = []string{in}
	}
	out := make([]*clip, 0, len(paths))
	for _, p := range paths {
		c, err := loadClip(p, period, minGap, mergeGap)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// labelPath is NAME.segments.json for NAME.16k.wav (or NAME.wav).
func labelPath(wav string) string {
	base := strings.TrimSuffix(wav, filepath.Ext(wav))
	base = strings.TrimSuffix(base, ".16k")
	return base + ".segments.json"
}

func loadClip(path string, period, minGap, mergeGap time.Duration) (*clip, error) {
	a, err := fixtures.LoadWAV(path)
	if err != nil {
		return nil, err
	}
	c := &clip{name: filepath.Base(path)}
	var segs []fixtures.Segment
	if lp := labelPath(path); fileExists(lp) {
		if segs, err = fixtures.LoadSegments(lp); err != nil {
			return nil, err
		}
		c.labels = "segments.json"
	} else if s, ok := energySpan(a); ok {
		segs = []fixtures.Segment{s}
		c.labels = "energy"
	} else {
		c.labels = "none"
	}
	pass := max(period, a.Duration()+minGap)
	full, err := fixtures.Concat(a, fixtures.Silence(a.Rate, pass-a.Duration()))
	if err != nil {
		return nil, err
	}
	if c.stream, err = fixtures.Encode(full, fixtures.EncodeOptions{FEC: true}); err != nil {
		return nil, err
	}
	c.frames = len(c.stream.Packets)
	frameMs := int(fixtures.FrameDuration / time.Millisecond)
	for _, s := range segs {
		sp := span{first: s.StartMs / frameMs, last: (s.EndMs - 1) / frameMs}
		if sp.last >= c.frames {
			return nil, fmt.Errorf("%s: label [%d,%d) ms is past the audio's end", path, s.StartMs, s.EndMs)
		}
		// A pause shorter than the turn detector's silence does not end a
		// turn: the labels' speech segments merge into the expected turns.
		if n := len(c.turns); n > 0 && time.Duration(sp.first-c.turns[n-1].last-1)*fixtures.FrameDuration < mergeGap {
			c.turns[n-1].last = sp.last
			continue
		}
		c.turns = append(c.turns, sp)
	}
	c.frameTurn = make([]int16, c.frames)
	for i := range c.frameTurn {
		c.frameTurn[i] = -1
	}
	for j, t := range c.turns {
		for f := t.first; f <= t.last; f++ {
			c.frameTurn[f] = int16(j)
		}
	}
	return c, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// energySpan is the span of 20 ms frames whose RMS is above -40 dBFS.
func energySpan(a *fixtures.Audio) (fixtures.Segment, bool) {
	frame := a.Rate / 50
	first, last := -1, -1
	for i := 0; (i+1)*frame <= len(a.Samples); i++ {
		var sum float64
		for _, v := range a.Samples[i*frame : (i+1)*frame] {
			sum += float64(v) * float64(v)
		}
		if math.Sqrt(sum/float64(frame)) > 32768*0.01 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return fixtures.Segment{}, false
	}
	return fixtures.Segment{StartMs: first * 20, EndMs: (last + 1) * 20}, true
}
