package pipeline_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// colouredNoise is n samples of white, pink (Paul Kellet's filter) or brown
// (leaky integrated white) noise scaled to dbfs RMS.
func colouredNoise(kind string, n int, dbfs float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]float64, n)
	var b0, b1, b2, b3, b4, b5, b6, br float64
	for i := range x {
		w := r.NormFloat64()
		switch kind {
		case "white":
			x[i] = w
		case "pink":
			b0 = 0.99886*b0 + w*0.0555179
			b1 = 0.99332*b1 + w*0.0750759
			b2 = 0.96900*b2 + w*0.1538520
			b3 = 0.86650*b3 + w*0.3104856
			b4 = 0.55000*b4 + w*0.5329522
			b5 = -0.7616*b5 - w*0.0168980
			x[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w*0.5362
			b6 = w * 0.115926
		case "brown":
			br = 0.995*br + w*0.1
			x[i] = br
		}
	}
	var ms float64
	for _, v := range x {
		ms += v * v
	}
	g := math.Pow(10, dbfs/20) * 32768 / math.Sqrt(ms/float64(n))
	out := make([]int16, n)
	for i, v := range x {
		out[i] = int16(max(-32768, min(32767, v*g)))
	}
	return out
}

// starts runs pcm through a fresh receive pipeline (VAD and turn detector,
// no network) and returns where each turn started, in ms.
func starts(t *testing.T, pcm []int16) []int64 {
	t.Helper()
	in, err := pipeline.New(pipeline.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	for k := 0; k+audio.Frame10 <= len(pcm); k += audio.Frame10 {
		in.Analyse(pcm[k:k+audio.Frame10], int64(k), false, func(e *turn.Event) {
			if e.Type == turn.SpeechStarted {
				at = append(at, int64(k)*1000/audio.SampleRate)
			}
		})
	}
	return at
}

// TestStationaryNoiseStartsNoTurn: a minute of white, pink or brown noise,
// at a quiet room's level or a loud fan's, is nobody talking. Before the VAD's
// idle gate each of them started a turn every few seconds (and a recogniser
// pass with it), at every level alike.
func TestStationaryNoiseStartsNoTurn(t *testing.T) {
	for _, kind := range []string{"white", "pink", "brown"} {
		for _, dbfs := range []float64{-70, -50, -30} {
			t.Run(fmt.Sprintf("%s/%.0fdBFS", kind, dbfs), func(t *testing.T) {
				if at := starts(t, colouredNoise(kind, 60*audio.SampleRate, dbfs, 5)); len(at) > 0 {
					t.Fatalf("%d turns started in 60 s of %s noise at %.0f dBFS (first at %d ms)", len(at), kind, dbfs, at[0])
				}
			})
		}
	}
}

// TestSpeechAfterStationaryNoise: the same noise does not hide a person who
// starts talking over it (10 dB above it) after 20 s: the turn starts within
// 300 ms of the speech.
func TestSpeechAfterStationaryNoise(t *testing.T) {
	sp, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.16k.wav", audio.SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	var ps float64
	for _, s := range sp {
		ps += float64(s) * float64(s)
	}
	speechDb := 10 * math.Log10(ps/float64(len(sp))/(32768*32768))
	const lead = 20 * audio.SampleRate
	for _, kind := range []string{"white", "pink", "brown"} {
		t.Run(kind, func(t *testing.T) {
			pcm := colouredNoise(kind, lead+len(sp)+audio.SampleRate, speechDb-10, 9)
			for i, s := range sp {
				pcm[lead+i] = int16(max(-32768, min(32767, int(pcm[lead+i])+int(s))))
			}
			at := starts(t, pcm)
			// The fixture opens with 0.3 s of digital silence.
			onset := int64(lead*1000/audio.SampleRate) + 300
			if len(at) == 0 || at[0] < onset-100 || at[0] > onset+300 {
				t.Fatalf("%s noise, speech from %d ms: turns started at %v", kind, onset, at)
			}
		})
	}
}
