package audio

import (
	"errors"
	"testing"

	goaudio "github.com/go-audio/audio"
)

func TestIntBufferRoundTrip(t *testing.T) {
	pcm := []int16{0, 1, -1, 32767, -32768, 1234}
	var ib goaudio.IntBuffer
	ToIntBuffer(&ib, pcm)
	if ib.Format.SampleRate != SampleRate || ib.Format.NumChannels != 1 || ib.SourceBitDepth != 16 {
		t.Fatalf("format %+v bits %d", ib.Format, ib.SourceBitDepth)
	}
	out := make([]int16, len(pcm))
	n, err := FromIntBuffer(out, &ib)
	if err != nil || n != len(pcm) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	for i := range pcm {
		if out[i] != pcm[i] {
			t.Fatalf("sample %d: %d != %d", i, out[i], pcm[i])
		}
	}
	ib.Data[0] = 70000
	if _, err := FromIntBuffer(out, &ib); err != nil || out[0] != 32767 {
		t.Fatalf("clip: %d %v", out[0], err)
	}
}

func TestFromIntBufferErrors(t *testing.T) {
	out := make([]int16, 4)
	cases := []*goaudio.IntBuffer{
		nil,
		{Data: []int{1}},
		{Format: &goaudio.Format{NumChannels: 2, SampleRate: 16000}, Data: []int{1}},
		{Format: &goaudio.Format{NumChannels: 1, SampleRate: 48000}, Data: []int{1}},
		{Format: &goaudio.Format{NumChannels: 1, SampleRate: 16000}, SourceBitDepth: 24, Data: []int{1}},
	}
	for i, c := range cases {
		if _, err := FromIntBuffer(out, c); !errors.Is(err, ErrFormat) {
			t.Errorf("case %d: err %v, want ErrFormat", i, err)
		}
	}
	big := &goaudio.IntBuffer{Format: Format16k, Data: make([]int, 5)}
	if _, err := FromIntBuffer(out, big); !errors.Is(err, ErrFrameSize) {
		t.Errorf("short dst: %v", err)
	}
}

func TestFramer(t *testing.T) {
	f, err := NewFramer(Frame10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFramer(0); !errors.Is(err, ErrFrameSize) {
		t.Fatalf("size 0: %v", err)
	}
	var got []int16
	frames := 0
	emit := func(fr []int16) error {
		if len(fr) != Frame10 {
			t.Fatalf("frame len %d", len(fr))
		}
		frames++
		got = append(got, fr...)
		return nil
	}
	var next int16
	for _, chunk := range []int{7, 160, 333, 1, 159, 480} {
		pcm := make([]int16, chunk)
		for i := range pcm {
			pcm[i] = next
			next++
		}
		if err := f.Write(pcm, emit); err != nil {
			t.Fatal(err)
		}
	}
	total := 7 + 160 + 333 + 1 + 159 + 480
	if frames != total/Frame10 || f.Buffered() != total%Frame10 {
		t.Fatalf("frames %d buffered %d", frames, f.Buffered())
	}
	for i, v := range got {
		if v != int16(i) {
			t.Fatalf("sample %d = %d: order broken", i, v)
		}
	}
	stop := errors.New("stop")
	if err := f.Write(make([]int16, 400), func([]int16) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("emit error not returned: %v", err)
	}
}

func BenchmarkFramer(b *testing.B) {
	f, _ := NewFramer(Frame10)
	pcm := make([]int16, 333)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Write(pcm, func([]int16) error { return nil })
	}
}

func BenchmarkToIntBuffer(b *testing.B) {
	pcm := make([]int16, Frame20)
	var ib goaudio.IntBuffer
	b.ReportAllocs()
	for b.Loop() {
		ToIntBuffer(&ib, pcm)
	}
}
