package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/veraneural/vera-gateway/audio/vad"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// manifest is the frame grid the anchor scorers read (written by -dump): the
// same mixed audio, frames and labels vera-eval scores.
type manifest struct {
	FrameMs    int                 `json:"frame_ms"`
	CollarMs   int                 `json:"collar_ms"`
	SampleRate int                 `json:"sample_rate"`
	Conditions []manifestCondition `json:"conditions"`
}

type manifestCondition struct {
	Name  string         `json:"name"`
	Clips []manifestClip `json:"clips"`
}

type manifestClip struct {
	Name string `json:"name"`
	WAV  string `json:"wav"` // relative to the manifest
	// Labels per 10 ms frame: 1 speech, 0 non-speech, -1 not scored.
	Labels   []int8    `json:"labels"`
	Segments []segment `json:"segments"`
}

func dumpConditions(dir string, conds []condition, collarMs int) error {
	m := manifest{FrameMs: frameMs, CollarMs: collarMs, SampleRate: sampleRate}
	for ci, c := range conds {
		sub := fmt.Sprintf("c%02d", ci)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
		mc := manifestCondition{Name: c.name}
		for _, cl := range c.clips {
			rel := filepath.Join(sub, cl.name+".16k.wav")
			if err := wavio.WriteWAVFile(filepath.Join(dir, rel), sampleRate, cl.pcm); err != nil {
				return err
			}
			mc.Clips = append(mc.Clips, manifestClip{Name: cl.name, WAV: rel,
				Labels: frameLabels(len(cl.pcm), cl.segs, collarMs), Segments: cl.segs})
		}
		m.Conditions = append(m.Conditions, mc)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o644)
}

const nFeat = 4

type sample struct {
	x    [nFeat]float64
	y    float64
	clip int
}

func featVec(f vad.Features) [nFeat]float64 {
	return [nFeat]float64{float64(f.SNR), float64(f.Harmonicity), float64(f.Flatness), float64(f.Modulation)}
}

// fitWeights fits the VAD's logistic weights on every scored frame of every
// condition and reports leave-one-clip-out F1/FAR so overfitting shows.
func fitWeights(w io.Writer, conds []condition, collarMs int) error {
	var data []sample
	clipIdx := map[string]int{}
	for _, c := range conds {
		for _, cl := range c.clips {
			if _, ok := clipIdx[cl.name]; !ok {
				clipIdx[cl.name] = len(clipIdx)
			}
			var feats []vad.Features
			if _, err := vadProbs(cl.pcm, &feats); err != nil {
				return err
			}
			for i, l := range frameLabels(len(cl.pcm), cl.segs, collarMs) {
				if l < 0 || feats[i].Silent {
					continue
				}
				data = append(data, sample{x: featVec(feats[i]), y: float64(l), clip: clipIdx[cl.name]})
			}
		}
	}
	wAll := logistic(data, -1)
	fmt.Fprintf(w, "fitted on %d frames: bias %.3f snr %.4f harmonicity %.3f flatness %.4f modulation %.4f\n",
		len(data), wAll[0], wAll[1], wAll[2], wAll[3], wAll[4])
	fmt.Fprintf(w, "leave-one-clip-out (raw p >= 0.5, no release):\n")
	var tot, totDef counts
	def := vad.DefaultWeights()
	defW := [nFeat + 1]float64{float64(def.Bias), float64(def.SNR), float64(def.Harmonicity), float64(def.Flatness), float64(def.Modulation)}
	for name, ci := range clipIdx {
		wt := logistic(data, ci)
		var c, cd counts
		for _, s := range data {
			if s.clip != ci {
				continue
			}
			c.add(classify(wt, s))
			cd.add(classify(defW, s))
		}
		tot.add(c)
		totDef.add(cd)
		r, rd := result(name, c), result(name, cd)
		fmt.Fprintf(w, "  %-40s held-out F1 %.3f FAR %.3f | defaults F1 %.3f FAR %.3f\n", name, r.F1, r.FAR, rd.F1, rd.FAR)
	}
	r, rd := result("all", tot), result("all", totDef)
	fmt.Fprintf(w, "  %-40s held-out F1 %.3f FAR %.3f | defaults F1 %.3f FAR %.3f\n", "pooled", r.F1, r.FAR, rd.F1, rd.FAR)
	return nil
}

func classify(wt [nFeat + 1]float64, s sample) counts {
	z := wt[0]
	for j := range nFeat {
		z += wt[j+1] * s.x[j]
	}
	speech := z >= 0
	switch {
	case s.y == 1 && speech:
		return counts{tp: 1}
	case s.y == 1:
		return counts{fn: 1}
	case speech:
		return counts{fp: 1}
	}
	return counts{tn: 1}
}

// logistic fits weights (bias first) by gradient descent on standardised
// features with a small L2 penalty, skipping samples of clip `skip`.
// Non-speech frames are weighted so both classes count equally: false alarms
// matter as much as misses.
func logistic(data []sample, skip int) [nFeat + 1]float64 {
	var mean, sd [nFeat]float64
	var n, pos float64
	for _, s := range data {
		if s.clip == skip {
			continue
		}
		n++
		pos += s.y
		for j := range nFeat {
			mean[j] += s.x[j]
		}
	}
	for j := range nFeat {
		mean[j] /= n
	}
	for _, s := range data {
		if s.clip == skip {
			continue
		}
		for j := range nFeat {
			d := s.x[j] - mean[j]
			sd[j] += d * d
		}
	}
	for j := range nFeat {
		sd[j] = math.Sqrt(sd[j]/n) + 1e-9
	}
	wPos, wNeg := n/(2*pos), n/(2*(n-pos))
	var wt [nFeat + 1]float64
	const lr, l2 = 0.5, 1e-3
	for range 400 {
		var g [nFeat + 1]float64
		for _, s := range data {
			if s.clip == skip {
				continue
			}
			z := wt[0]
			for j := range nFeat {
				z += wt[j+1] * (s.x[j] - mean[j]) / sd[j]
			}
			p := 1 / (1 + math.Exp(-z))
			cw := wNeg
			if s.y == 1 {
				cw = wPos
			}
			e := (p - s.y) * cw
			g[0] += e
			for j := range nFeat {
				g[j+1] += e * (s.x[j] - mean[j]) / sd[j]
			}
		}
		for j := range g {
			reg := 0.0
			if j > 0 {
				reg = l2 * wt[j]
			}
			wt[j] -= lr * (g[j]/n + reg)
		}
	}
	// Back to raw feature units.
	out := wt
	for j := range nFeat {
		out[j+1] = wt[j+1] / sd[j]
		out[0] -= wt[j+1] * mean[j] / sd[j]
	}
	return out
}
