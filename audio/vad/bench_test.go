package vad

import (
	"testing"

	"github.com/veraneural/vera-gateway/audio/wavio"
)

func BenchmarkProcess10ms(b *testing.B) {
	pcm, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.16k.wav", 16000)
	if err != nil {
		b.Fatal(err)
	}
	v, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	n := len(pcm) / FrameSamples
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i % n
		if _, err := v.Process(pcm[k*FrameSamples : (k+1)*FrameSamples]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
