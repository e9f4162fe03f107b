package rtc_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hraban/opus"
	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// envelope is the RMS of each 20 ms frame at 16 kHz.
func envelope(pcm []int16) []float64 {
	out := make([]float64, 0, len(pcm)/320)
	for i := 0; i+320 <= len(pcm); i += 320 {
		var e float64
		for _, v := range pcm[i : i+320] {
			e += float64(v) * float64(v)
		}
		out = append(out, math.Sqrt(e/320))
	}
	return out
}

// bestCorr is the highest Pearson correlation of a and b shifted by up to
// maxLag frames either way.
func bestCorr(a, b []float64, maxLag int) float64 {
	best := -1.0
	for lag := -maxLag; lag <= maxLag; lag++ {
		var xs, ys []float64
		for i := range a {
			j := i + lag
			if j >= 0 && j < len(b) {
				xs, ys = append(xs, a[i]), append(ys, b[j])
			}
		}
		if len(xs) < 10 {
			continue
		}
		best = max(best, pearson(xs, ys))
	}
	return best
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(len(x)), my/float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func TestImpairedStreamOnTheWire(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	s := fixtures.Impair(speechStream(t), fixtures.Impairment{Seed: 42, LossPct: 10, BurstLen: 2, Jitter: 60 * time.Millisecond, ReorderPct: 5, DupPct: 3})
	want := map[uint16]int{}
	for _, p := range s.Packets {
		want[p.Seq]++
	}
	if err := c.Play(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := sess.waitPackets(ctx, len(want)); err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	// Every packet that survived the loss arrives once: a duplicate is an
	// SRTP replay, which pion's replay window drops before the read loop.
	dups := 0
	for seq, n := range want {
		dups += n - 1
		if sess.seqs[seq] != 1 {
			t.Errorf("seq %d: received %d times, sent %d", seq, sess.seqs[seq], n)
		}
	}
	if dups == 0 {
		t.Error("the impairment sent no duplicates; the test lost its point")
	}
	if len(sess.seqs) != len(want) {
		t.Errorf("received %d distinct seqs, sent %d", len(sess.seqs), len(want))
	}
	conn, _ := ts.h.Conn(idOf(c))
	if conn.Stats().GapsIn == 0 {
		t.Error("10 % loss produced no sequence gaps in the stats")
	}
}

func TestRealSpeechSurvivesTransport(t *testing.T) {
	path := filepath.Join(fixtures.SharedAudioDir(t), "en_cmu_goforward.16k.wav")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared fixture absent (%v)", err)
	}
	a, err := fixtures.LoadWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	if err := c.Play(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := sess.waitPackets(ctx, len(s.Packets)); err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	got := envelope(sess.pcmOut)
	sess.mu.Unlock()
	if r := bestCorr(envelope(a.Samples), got, 3); r < 0.9 {
		t.Fatalf("decoded speech envelope correlates r=%.3f with the recording, want >= 0.9", r)
	}
}

// pcmClip is an rtc.PCMSource over a 16 kHz clip.
type pcmClip struct {
	s []int16
	i int
}

func (p *pcmClip) ReadFrame(dst []int16) (int, error) {
	if p.i >= len(p.s) {
		return 0, io.EOF
	}
	n := copy(dst, p.s[p.i:])
	p.i += n
	return n, nil
}

func TestOutboundPCMPlayout(t *testing.T) {
	a, err := fixtures.LoadWAV(filepath.Join(fixtures.RepoRoot(t), "testdata", "rtc", "hello16k.wav"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	conn, _ := ts.h.Conn(idOf(c))
	<-conn.Ready()
	var tapped []int16
	conn.Sender().SetTap(func(pcm []int16, _ uint32) { tapped = append(tapped, pcm...) })
	done := make(chan rtc.Playout, 1)
	conn.Sender().PlayPCM(&pcmClip{s: a.Samples}, func(p rtc.Playout) { done <- p })
	var p rtc.Playout
	select {
	case p = <-done:
	case <-ctx.Done():
		t.Fatal("playout did not finish")
	}
	frames := (len(a.Samples) + 319) / 320
	if p.Frames != int64(frames) || p.Stopped || p.Err != nil {
		t.Fatalf("playout %+v, want %d frames", p, frames)
	}
	if len(tapped) != frames*320 {
		t.Fatalf("tap saw %d samples, want %d", len(tapped), frames*320)
	}
	// Wait for the last packet to reach the client, then decode what it got.
	if err := c.WaitReceived(ctx, frames); err != nil {
		t.Fatal(err)
	}
	dec, _ := opus.NewDecoder(16000, 1)
	buf := make([]int16, 320)
	var pcm []int16
	for _, rp := range c.Received() {
		n, err := dec.Decode(rp.Payload, buf)
		if err != nil {
			t.Fatal(err)
		}
		pcm = append(pcm, buf[:n]...)
	}
	if r := bestCorr(envelope(a.Samples), envelope(pcm), 3); r < 0.9 {
		t.Fatalf("client-decoded playout correlates r=%.3f with the source, want >= 0.9", r)
	}
}
