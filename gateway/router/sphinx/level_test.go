package sphinx

import (
	"math"
	"math/rand"
)

// setLevel scales pcm so that its RMS over samples louder than −60 dBFS
// (the speech, not the padding) is dbfs.
func setLevel(pcm []int16, dbfs float64) []int16 {
	var sum float64
	var n int
	for _, s := range pcm {
		if v := float64(s); math.Abs(v) > 33 {
			sum += v * v
			n++
		}
	}
	if n == 0 {
		return pcm
	}
	g := 32768 * math.Pow(10, dbfs/20) / math.Sqrt(sum/float64(n))
	out := make([]int16, len(pcm))
	for i, s := range pcm {
		out[i] = int16(min(max(math.Round(float64(s)*g), -32768), 32767))
	}
	return out
}

// addPinkNoise adds pink noise at dbfs RMS, seeded for repeatability
// (Paul Kellet's economy filter over white noise).
func addPinkNoise(pcm []int16, dbfs float64, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	amp := 32768 * math.Pow(10, dbfs/20)
	var b0, b1, b2 float64
	noise := make([]float64, len(pcm))
	var sum float64
	for i := range noise {
		w := rng.NormFloat64()
		b0 = 0.99765*b0 + w*0.0990460
		b1 = 0.96300*b1 + w*0.2965164
		b2 = 0.57000*b2 + w*1.0526913
		noise[i] = b0 + b1 + b2 + w*0.1848
		sum += noise[i] * noise[i]
	}
	g := amp / math.Sqrt(sum/float64(len(noise)))
	for i, s := range pcm {
		pcm[i] = int16(min(max(math.Round(float64(s)+noise[i]*g), -32768), 32767))
	}
}
