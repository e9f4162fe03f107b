package rtc

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
)

type captureWriter struct{ pkts []rtp.Packet }

func (w *captureWriter) WriteRTP(p *rtp.Packet) error {
	c := *p
	c.Payload = append([]byte(nil), p.Payload...)
	w.pkts = append(w.pkts, c)
	return nil
}

// scriptSource returns the scripted results in order, then io.EOF.
type scriptSource struct {
	script []error // nil = a frame
	i      int
}

func (s *scriptSource) NextOpus() ([]byte, error) {
	if s.i >= len(s.script) {
		return nil, io.EOF
	}
	e := s.script[s.i]
	s.i++
	if e != nil {
		return nil, e
	}
	return []byte{0xf8, 0xff, 0xfe}, nil // an Opus DTX-style frame
}

type toneSource struct{ frames, n int }

func (s *toneSource) ReadFrame(dst []int16) (int, error) {
	if s.n >= s.frames {
		return 0, io.EOF
	}
	s.n++
	for i := range dst {
		dst[i] = int16((i % 40) * 400)
	}
	return len(dst), nil
}

func newTestSender(t *testing.T) (*Sender, *captureWriter) {
	t.Helper()
	enc, err := newPCMEncoder(24000, 5)
	if err != nil {
		t.Fatal(err)
	}
	w := &captureWriter{}
	s := newSender(w, enc, 65534, 1000)
	return s, w
}

func TestSenderPacingAndClock(t *testing.T) {
	s, w := newTestSender(t)
	var done []Playout
	src := &scriptSource{script: []error{nil, nil, ErrUnderrun, nil}}
	s.PlayOpus(src, func(p Playout) { done = append(done, p) })
	s.tick() // not live yet: the source must not be consumed
	if len(w.pkts) != 0 || src.i != 0 {
		t.Fatalf("sent %d packets before the transport was live", len(w.pkts))
	}
	s.setLive(true)
	for range 6 {
		s.tick()
	}
	if len(w.pkts) != 3 {
		t.Fatalf("sent %d packets, want 3", len(w.pkts))
	}
	// Timestamps advance 960 per tick, including the underrun and the
	// not-live tick; sequence numbers are contiguous across the wrap.
	wantTS := []uint32{1000 + 960, 1000 + 2*960, 1000 + 4*960}
	wantSeq := []uint16{65534, 65535, 0}
	wantMarker := []bool{true, false, true}
	for i, p := range w.pkts {
		if p.Timestamp != wantTS[i] || p.SequenceNumber != wantSeq[i] || p.Marker != wantMarker[i] || p.PayloadType != OpusPayloadType {
			t.Errorf("packet %d: ts %d seq %d marker %v pt %d", i, p.Timestamp, p.SequenceNumber, p.Marker, p.PayloadType)
		}
	}
	if len(done) != 1 || done[0].Frames != 3 || done[0].Stopped || done[0].Err != nil {
		t.Fatalf("onDone: %+v", done)
	}
	if s.Active() {
		t.Fatal("source still active after EOF")
	}
}

func TestSenderPauseStopAndPCM(t *testing.T) {
	s, w := newTestSender(t)
	s.setLive(true)
	var taps int
	s.SetTap(func(pcm []int16, _ uint32) {
		if len(pcm) != PCMFrame {
			t.Errorf("tap frame %d samples", len(pcm))
		}
		taps++
	})
	var done []Playout
	s.PlayPCM(&toneSource{frames: 100}, func(p Playout) { done = append(done, p) })
	for range 5 {
		s.tick()
	}
	s.Pause()
	for range 3 {
		s.tick()
	}
	if got := s.Position().Frames; got != 5 {
		t.Fatalf("position after pause = %d, want 5", got)
	}
	s.Resume()
	s.tick()
	p := s.Stop()
	if p.Frames != 6 || !p.Stopped || len(done) != 1 || done[0] != p {
		t.Fatalf("stop: %+v, done %+v", p, done)
	}
	if len(w.pkts) != 6 || taps != 6 {
		t.Fatalf("packets %d taps %d, want 6", len(w.pkts), taps)
	}
	if !w.pkts[5].Marker || w.pkts[4].Marker {
		t.Fatal("marker must be set on the first packet after the pause only")
	}
	// A failing source ends with its error.
	boom := errors.New("tts broke")
	s.PlayOpus(&scriptSource{script: []error{nil, boom}}, func(p Playout) { done = append(done, p) })
	s.tick()
	s.tick()
	if last := done[len(done)-1]; !errors.Is(last.Err, boom) || last.Frames != 1 {
		t.Fatalf("failing source: %+v", last)
	}
	// Replacing a source reports the old one as stopped.
	s.PlayPCM(&toneSource{frames: 10}, func(p Playout) { done = append(done, p) })
	s.tick()
	s.PlayPCM(&toneSource{frames: 10}, nil)
	if last := done[len(done)-1]; !last.Stopped || last.Frames != 1 {
		t.Fatalf("replaced source: %+v", last)
	}
}

func TestSenderRephaseSendsFirstFrameAtOnce(t *testing.T) {
	s, w := newTestSender(t)
	s.setLive(true)
	s.PlayOpus(&scriptSource{script: []error{nil}}, nil)
	s.tick() // frame at ts 1000
	s.tick() // EOF: silent, ts now 1000+2*960 for the next tick
	if s.rephase(5 * time.Millisecond) {
		t.Fatal("rephase without a source must not send")
	}
	s.PlayOpus(&scriptSource{script: []error{nil, nil}}, nil)
	if !s.rephase(5 * time.Millisecond) {
		t.Fatal("rephase after silence did not send")
	}
	// 5 ms after the silent tick at 1000+960: 1000+960+240.
	if got := w.pkts[len(w.pkts)-1]; got.Timestamp != 1000+960+240 || !got.Marker {
		t.Fatalf("rephased packet ts %d marker %v", got.Timestamp, got.Marker)
	}
	if s.rephase(time.Millisecond) {
		t.Fatal("rephase while playing must not send")
	}
	s.tick()
	if got := w.pkts[len(w.pkts)-1]; got.Timestamp != 1000+2*960+240 {
		t.Fatalf("next tick ts %d", got.Timestamp)
	}
}

// TestSenderDuck: Duck lowers a PCM source's frames from the next frame on
// (ramped over it), the tap (the echo guard's reference) hears the ducked
// frames, Duck(1) restores the gain, and a new source starts at full gain.
func TestSenderDuck(t *testing.T) {
	s, _ := newTestSender(t)
	s.setLive(true)
	var peaks []int
	s.SetTap(func(pcm []int16, _ uint32) {
		p := 0
		for _, v := range pcm {
			p = max(p, int(v))
		}
		peaks = append(peaks, p)
	})
	s.PlayPCM(&toneSource{frames: 100}, nil)
	s.tick()
	s.Duck(0.25)
	s.tick() // the ramp
	s.tick()
	s.Duck(1)
	s.tick() // the ramp back
	s.tick()
	s.Duck(0.5)
	s.PlayPCM(&toneSource{frames: 100}, nil)
	s.tick()
	full := 39 * 400
	want := []int{full, full / 4, full / 4, full, full, full}
	if len(peaks) != len(want) {
		t.Fatalf("%d frames tapped, want %d", len(peaks), len(want))
	}
	for i, w := range want {
		if i == 1 || i == 3 {
			// Ramp frames: between the two gains.
			if peaks[i] < full/4-1 || peaks[i] > full {
				t.Errorf("frame %d (ramp): peak %d, want within [%d, %d]", i, peaks[i], full/4, full)
			}
			continue
		}
		if d := peaks[i] - w; d < -1 || d > 1 {
			t.Errorf("frame %d: peak %d, want %d (peaks %v)", i, peaks[i], w, peaks)
		}
	}
}

// stallWriter blocks every write until release is closed, as a write to the
// shared UDP socket does when the senders queue for its lock on a starved
// machine.
type stallWriter struct {
	entered chan struct{}
	release chan struct{}
	wrote   atomic.Int64
}

func (w *stallWriter) WriteRTP(*rtp.Packet) error {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	w.wrote.Add(1)
	return nil
}

// TestSenderControlDoesNotWaitForTheWrite: the media loop asks Active every
// frame and pauses, ducks and resumes at a barge-in; none of these may wait
// for a tick stuck in its network write. Stop still returns (and runs
// onDone) only after the packet in flight is written.
func TestSenderControlDoesNotWaitForTheWrite(t *testing.T) {
	w := &stallWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := newSender(w, nil, 0, 0)
	s.setLive(true)
	doneAt := make(chan int64, 1)
	s.PlayOpus(&scriptSource{script: []error{nil, nil, nil}}, func(Playout) { doneAt <- w.wrote.Load() })
	ticked := make(chan struct{})
	go func() { s.tick(); close(ticked) }()
	<-w.entered
	ctl := make(chan struct{})
	go func() {
		_ = s.Active()
		s.Pause()
		s.Duck(0.5)
		s.Resume()
		_ = s.Position()
		close(ctl)
	}()
	select {
	case <-ctl:
	case <-time.After(2 * time.Second):
		close(w.release)
		t.Fatal("Active/Pause/Duck/Resume/Position waited for a tick's network write")
	}
	if !s.Active() {
		t.Fatal("Active: the source is loaded")
	}
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while the packet in flight was not yet written")
	case <-time.After(50 * time.Millisecond):
	}
	close(w.release)
	<-ticked
	<-stopped
	if n := <-doneAt; n != 1 {
		t.Fatalf("onDone ran with %d packets written, want 1 (after the packet in flight)", n)
	}
	if s.Active() {
		t.Fatal("Active after Stop")
	}
}
