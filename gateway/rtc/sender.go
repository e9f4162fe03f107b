package rtc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
)

// FrameDuration is the playout frame length.
const FrameDuration = 20 * time.Millisecond

// ErrUnderrun is returned by a source that has no frame ready at this tick
// (e.g. TTS still synthesising). The tick sends nothing, the RTP clock
// advances, and the source is asked again next tick.
var ErrUnderrun = errors.New("rtc: source underrun")

// OpusSource yields pre-encoded 20 ms Opus packets (48 kHz RTP clock).
// NextOpus returns io.EOF when exhausted or ErrUnderrun when nothing is
// ready yet. The returned slice need only stay valid until the next call.
type OpusSource interface {
	NextOpus() ([]byte, error)
}

// PCMSource yields 20 ms frames of 16 kHz mono PCM (PCMFrame samples).
// ReadFrame fills dst (len PCMFrame) and returns how many samples are real;
// the rest are sent as silence. It returns io.EOF (with n == 0) when
// exhausted or ErrUnderrun when nothing is ready yet.
type PCMSource interface {
	ReadFrame(dst []int16) (n int, err error)
}

// Playout reports the state of one source on the Sender.
type Playout struct {
	// Frames is the number of 20 ms frames of this source put on the wire.
	Frames int64
	// Stopped is true when Stop or a newer Play ended the source early.
	Stopped bool
	// Err is the source's error other than io.EOF, if any.
	Err error
}

// Played is the amount of the source's audio sent so far.
func (p Playout) Played() time.Duration { return time.Duration(p.Frames) * FrameDuration }

// rtpWriter is what the sender writes to (a pion local track in production).
type rtpWriter interface {
	WriteRTP(p *rtp.Packet) error
}

// Sender paces outbound audio: one 20 ms Opus frame per ticker tick, never
// sleeping. The RTP timestamp advances by 960 on every tick, including
// silence, so the receiver sees real time; the first packet after silence
// carries the marker bit. It is safe for concurrent use.
type Sender struct {
	out rtpWriter
	enc *pcmEncoder

	// loaded mirrors "a source is loaded" (opusSrc or pcmSrc set, changed
	// under mu) for Active, which the media loop asks every frame: it must
	// never wait for a tick in progress.
	loaded atomic.Bool

	// wmu is held by a tick from its start through its network write, and
	// by Stop and Play (before mu), so that a stopped or replaced source's
	// last packet is on the wire before its onDone runs.
	wmu sync.Mutex

	// mu guards everything below. It is never held across the network
	// write: the connections share one UDP socket, whose write lock makes
	// the senders queue behind each other on a busy machine, and the media
	// loop's calls (Active, Pause, Duck, Resume at a barge-in) must not
	// queue with them.
	mu       sync.Mutex
	live     bool // the transport is connected; otherwise sources wait
	paused   bool
	opusSrc  OpusSource
	pcmSrc   PCMSource
	onDone   func(Playout)
	cur      Playout
	tap      func(pcm []int16, ts uint32)
	pktTap   func(payload []byte, ts uint32)
	seq      uint16
	ts       uint32
	silent   bool // the previous tick sent nothing
	pcm      []int16
	pkt      rtp.Packet
	sent     int64
	writeErr error
	// att and attTo: the PCM sources' attenuation (1 − gain) now and the
	// one Duck asked for; each frame ramps from one to the other.
	att, attTo float32

	kick chan struct{} // a new source arrived: maybe send now (run loop)
}

func newSender(out rtpWriter, enc *pcmEncoder, seq uint16, ts uint32) *Sender {
	return &Sender{out: out, enc: enc, seq: seq, ts: ts, silent: true, pcm: make([]int16, PCMFrame), kick: make(chan struct{}, 1)}
}

// PlayOpus starts playing src, replacing (and stopping) the current source.
// onDone, if set, is called once from the sender goroutine when src ends or
// is stopped; it must not block.
func (s *Sender) PlayOpus(src OpusSource, onDone func(Playout)) {
	s.play(src, nil, onDone)
}

// PlayPCM starts playing src, encoding each frame to Opus; see PlayOpus.
func (s *Sender) PlayPCM(src PCMSource, onDone func(Playout)) {
	s.play(nil, src, onDone)
}

func (s *Sender) play(o OpusSource, p PCMSource, onDone func(Playout)) {
	s.wmu.Lock()
	s.mu.Lock()
	prev, prevDone := s.finishLocked(true, nil)
	s.opusSrc, s.pcmSrc, s.onDone, s.cur = o, p, onDone, Playout{}
	s.loaded.Store(o != nil || p != nil)
	s.paused = false
	s.att, s.attTo = 0, 0
	s.mu.Unlock()
	s.wmu.Unlock()
	if prevDone != nil {
		prevDone(prev)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Stop ends the current source and returns how much of it was played.
func (s *Sender) Stop() Playout {
	s.wmu.Lock()
	s.mu.Lock()
	p, done := s.finishLocked(true, nil)
	s.mu.Unlock()
	s.wmu.Unlock()
	if done != nil {
		done(p)
	}
	return p
}

// Pause holds playout (barge-in) without losing the position; Resume
// continues from the next unplayed frame.
func (s *Sender) Pause() {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

// Resume continues a paused source.
func (s *Sender) Resume() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// Duck sets the gain of PCM sources (0–1; 1 = as synthesised) from the
// next frame on, ramped over one frame: the reply goes on, quieter, while
// the person says "mm-hm" over it. Pre-encoded (Opus) sources are not
// ducked. A new source starts at full gain.
func (s *Sender) Duck(gain float32) {
	s.mu.Lock()
	s.attTo = 1 - min(max(gain, 0), 1)
	s.mu.Unlock()
}

// applyGain scales s.pcm by the duck's gain, ramping from the last
// frame's.
func (s *Sender) applyGain() {
	if s.att == 0 && s.attTo == 0 {
		return
	}
	n := float32(len(s.pcm))
	for i, v := range s.pcm {
		g := 1 - (s.att + (s.attTo-s.att)*float32(i+1)/n)
		s.pcm[i] = int16(float32(v) * g)
	}
	s.att = s.attTo
}

// Position returns the current source's playout so far.
func (s *Sender) Position() Playout {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Active reports whether a source is loaded (playing or paused). It takes
// no lock.
func (s *Sender) Active() bool { return s.loaded.Load() }

// EncoderParams are the settings the Sender encodes PCM sources with
// (zero when it has no encoder).
func (s *Sender) EncoderParams() EncoderParams {
	if s.enc == nil {
		return EncoderParams{}
	}
	return s.enc.params
}

// SentFrames is the total number of audio frames put on the wire.
func (s *Sender) SentFrames() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// SetTap installs fn to receive every PCM frame as it is sent, with its RTP
// timestamp: the echo reference for echo-aware barge-in. fn runs on the
// sender goroutine, must not block and must not keep pcm.
func (s *Sender) SetTap(fn func(pcm []int16, ts uint32)) {
	s.mu.Lock()
	s.tap = fn
	s.mu.Unlock()
}

// SetPacketTap installs fn to receive every Opus packet exactly as it is put
// on the wire, from PCM and pre-encoded sources alike, with its RTP
// timestamp (record mode). fn runs on the sender goroutine, must not block
// and must not keep payload.
func (s *Sender) SetPacketTap(fn func(payload []byte, ts uint32)) {
	s.mu.Lock()
	s.pktTap = fn
	s.mu.Unlock()
}

func (s *Sender) setLive(live bool) {
	s.mu.Lock()
	s.live = live
	s.mu.Unlock()
}

// finishLocked detaches the current source; the caller runs the returned
// callback after unlocking.
func (s *Sender) finishLocked(stopped bool, err error) (Playout, func(Playout)) {
	if s.opusSrc == nil && s.pcmSrc == nil {
		return s.cur, nil
	}
	p := s.cur
	p.Stopped, p.Err = stopped, err
	done := s.onDone
	s.opusSrc, s.pcmSrc, s.onDone = nil, nil, nil
	s.loaded.Store(false)
	s.cur = p
	return p, done
}

// tick sends at most one frame. It is the whole pacing step, separated from
// the ticker so tests drive it without wall time. It reports whether a
// source is still loaded afterwards. Only the run goroutine ticks (tests:
// one goroutine), so the packet it built under mu is written after mu is
// released.
func (s *Sender) tick() (active bool) {
	s.wmu.Lock()
	s.mu.Lock()
	var payload []byte
	var srcErr error
	var tapFrame []int16
	if s.live && !s.paused {
		switch {
		case s.opusSrc != nil:
			payload, srcErr = s.opusSrc.NextOpus()
		case s.pcmSrc != nil:
			clear(s.pcm)
			var n int
			n, srcErr = s.pcmSrc.ReadFrame(s.pcm)
			if srcErr == nil && n > 0 {
				s.applyGain()
				payload, srcErr = s.enc.encode(s.pcm)
				tapFrame = s.pcm
			}
		}
	}
	var doneP Playout
	var done func(Playout)
	switch {
	case srcErr == nil:
	case errors.Is(srcErr, ErrUnderrun):
		payload = nil
	case errors.Is(srcErr, io.EOF):
		payload = nil
		doneP, done = s.finishLocked(false, nil)
	default:
		payload = nil
		doneP, done = s.finishLocked(false, srcErr)
	}
	send := len(payload) > 0
	if send {
		s.pkt.Header = rtp.Header{Version: 2, PayloadType: OpusPayloadType, SequenceNumber: s.seq, Timestamp: s.ts, Marker: s.silent}
		s.pkt.Payload = payload
		s.seq++
		s.sent++
		s.cur.Frames++
		s.silent = false
		if s.tap != nil && tapFrame != nil {
			s.tap(tapFrame, s.ts)
		}
		if s.pktTap != nil {
			s.pktTap(payload, s.ts)
		}
	} else {
		s.silent = true
	}
	s.ts += FrameSamples48k
	active = s.opusSrc != nil || s.pcmSrc != nil
	s.mu.Unlock()
	if send {
		if err := s.out.WriteRTP(&s.pkt); err != nil {
			s.mu.Lock()
			if s.writeErr == nil {
				s.writeErr = fmt.Errorf("rtc: write rtp: %w", err)
			}
			s.mu.Unlock()
		}
	}
	s.wmu.Unlock()
	if done != nil {
		done(doneP)
	}
	return active
}

// maxCatchUp bounds how many late frames one ticker wake-up sends; beyond it
// the frames are skipped (the RTP clock still advances) so a stalled process
// does not burst seconds of audio.
const maxCatchUp = 3

// run paces tick with a ticker until ctx ends. Frames due are counted from
// the start time, so a late wake-up sends the missed frames (up to
// maxCatchUp) and the RTP clock never drifts from wall time. With no source
// loaded the ticker is parked, so a listening session costs no wake-ups; a
// new source unparks it and its first frame leaves at once (rephase).
func (s *Sender) run(ctx context.Context) {
	t := time.NewTicker(FrameDuration)
	defer t.Stop()
	start := time.Now()
	last := start
	var done int64
	parked := false
	for {
		select {
		case <-ctx.Done():
			s.Stop()
			return
		case <-s.kick:
			now := time.Now()
			wasParked := parked
			if parked {
				// Account for the whole frames that passed while parked.
				k := now.Sub(last) / FrameDuration
				s.skip(int64(k))
				last = last.Add(k * FrameDuration)
				parked = false
			}
			if s.rephase(now.Sub(last)) {
				// The ticker restarts from the frame just sent.
				start, last, done = now, now, 0
				t.Reset(FrameDuration)
			} else if wasParked {
				// Not live or paused: tick again from now (the RTP clock
				// is at most one frame off wall time across this silence).
				start, last, done = now, now, 0
				t.Reset(FrameDuration)
			}
		case now := <-t.C:
			last = now
			due := int64(now.Sub(start) / FrameDuration)
			n := max(due-done, 1)
			if n > maxCatchUp {
				s.skip(n - maxCatchUp)
				n = maxCatchUp
			}
			active := false
			for range n {
				active = s.tick()
			}
			done = due
			if !active {
				t.Stop()
				parked = true
			}
		}
	}
}

// rephase sends the first frame of a new source now rather than at the next
// tick (up to 20 ms later), if the line was silent: the first reply audio
// leaves as soon as it exists. The RTP clock is moved to "now" (sinceTick
// after the last tick), which keeps it monotonic because the last tick sent
// nothing. It reports whether it sent.
func (s *Sender) rephase(sinceTick time.Duration) bool {
	s.mu.Lock()
	if !s.silent || !s.live || s.paused || (s.opusSrc == nil && s.pcmSrc == nil) {
		s.mu.Unlock()
		return false
	}
	d := max(0, min(sinceTick, FrameDuration))
	s.ts = s.ts - FrameSamples48k + uint32(int64(d)*OpusClockRate/int64(time.Second))
	s.mu.Unlock()
	s.tick()
	return true
}

// skip advances the RTP clock by n frames without sending.
func (s *Sender) skip(n int64) {
	s.mu.Lock()
	s.ts += uint32(n) * FrameSamples48k
	s.silent = true
	s.mu.Unlock()
}
