package rtc

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
)

type discardWriter struct{}

func (discardWriter) WriteRTP(*rtp.Packet) error { return nil }

type endlessTone struct{}

func (endlessTone) ReadFrame(dst []int16) (int, error) {
	for i := range dst {
		dst[i] = int16((i*37)%2000 - 1000)
	}
	return len(dst), nil
}

// BenchmarkSenderTickPCM is the per-frame cost of the PCM playout path:
// Opus encode (16 kHz, complexity 5, FEC) plus packetisation.
func BenchmarkSenderTickPCM(b *testing.B) {
	enc, err := newPCMEncoder(24000, 5)
	if err != nil {
		b.Fatal(err)
	}
	s := newSender(discardWriter{}, enc, 0, 0)
	s.setLive(true)
	s.PlayPCM(endlessTone{}, nil)
	b.ReportAllocs()
	for b.Loop() {
		s.tick()
	}
}

// timedWriter signals the wall time of each write.
type timedWriter struct{ at chan time.Time }

func (w timedWriter) WriteRTP(*rtp.Packet) error {
	select {
	case w.at <- time.Now():
	default:
	}
	return nil
}

type oneFrame struct{ sent bool }

func (o *oneFrame) NextOpus() ([]byte, error) {
	if o.sent {
		return nil, io.EOF
	}
	o.sent = true
	return []byte{0xf8, 0xff, 0xfe}, nil
}

// BenchmarkFirstPacketLatency: time from PlayOpus (the first TTS audio
// exists) to the first RTP packet handed to pion, with the real run loop.
func BenchmarkFirstPacketLatency(b *testing.B) {
	w := timedWriter{at: make(chan time.Time, 1)}
	s := newSender(w, nil, 0, 0)
	s.setLive(true)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	var lat []time.Duration
	for b.Loop() {
		done := make(chan struct{})
		t0 := time.Now()
		s.PlayOpus(&oneFrame{}, func(Playout) { close(done) })
		at := <-w.at
		lat = append(lat, at.Sub(t0))
		<-done
		// Let one silent tick pass so every play starts from silence.
		idle := time.NewTimer(2 * FrameDuration)
		<-idle.C
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}
