package rtc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// EventsLabel is the data channel that carries the event protocol.
const EventsLabel = "events"

// Stats are a Conn's transport counters.
type Stats struct {
	PacketsIn   int64
	BytesIn     int64
	GapsIn      int64 // packets missing by sequence number (before any retransmit)
	EventsIn    int64
	EventsOut   int64
	FramesOut   int64
	ICERestarts int64
}

// Conn is one WebRTC session's transport: a PeerConnection, its inbound read
// loop, its paced Sender and its "events" data channel. Create it through the
// Handler. All methods are safe for concurrent use.
type Conn struct {
	id     string
	device string
	cfg    Config
	log    *slog.Logger
	pc     *webrtc.PeerConnection
	track  *webrtc.TrackLocalStaticRTP
	sender *Sender

	sess      Session
	sendCtx   context.Context
	sendStop  context.CancelFunc
	wg        sync.WaitGroup // read loops, RTCP drain, sender
	onClosed  func(*Conn, error)
	lastTouch atomic.Int64  // unix nanos of the last inbound packet or event
	iceState  atomic.Int32  // latest webrtc.ICEConnectionState
	pcState   atomic.Int32  // latest webrtc.PeerConnectionState
	iceKick   chan struct{} // either state changed
	dcLow     chan struct{} // the events channel drained below dcLowWater
	ready     chan struct{}
	readyOnce sync.Once
	path      atomic.Pointer[Path] // the selected candidate pair, nil before

	// sigMu serialises signaling (answer, trickle, restart).
	sigMu       sync.Mutex
	remoteOffer string
	etag        string

	// mu guards dc, dcOpen, pending, closing and the counters below it.
	mu        sync.Mutex
	dc        *webrtc.DataChannel
	dcOpen    bool
	pending   [][]byte
	closing   bool
	stats     Stats
	lastSeq   uint16
	seqPrimed bool
	reading   bool // an inbound audio read loop runs

	stopOnce   sync.Once
	stopCh     chan struct{}
	stopReason error
	done       chan struct{}
	err        error // set before done closes
}

func newConn(e *Engine, id, device string, log *slog.Logger) (*Conn, error) {
	pc, err := e.NewPeerConnection()
	if err != nil {
		return nil, err
	}
	track, err := webrtc.NewTrackLocalStaticRTP(OpusCodec, "audio", "vera-"+id)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("rtc: local track: %w", err), pc.Close())
	}
	enc, err := newPCMEncoder(e.cfg.EncoderBitrate, e.cfg.EncoderComplexity)
	if err != nil {
		return nil, errors.Join(err, pc.Close())
	}
	c := &Conn{
		id: id, device: device, cfg: e.cfg, log: log.With("session", id),
		pc: pc, track: track,
		sender:  newSender(track, enc, uint16(randUint32()), randUint32()),
		iceKick: make(chan struct{}, 1),
		dcLow:   make(chan struct{}, 1),
		ready:   make(chan struct{}),
		stopCh:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	c.sendCtx, c.sendStop = context.WithCancel(context.Background())
	c.touch()
	pc.SCTP().Transport().ICETransport().OnSelectedCandidatePairChange(func(p *webrtc.ICECandidatePair) {
		if p == nil || p.Local == nil || p.Remote == nil {
			return
		}
		path := Path{Protocol: p.Local.Protocol.String(), Local: p.Local.Typ.String(), Remote: p.Remote.Typ.String()}
		c.path.Store(&path)
		c.log.Info("rtc: ICE path", "protocol", path.Protocol, "local", path.Local, "remote", path.Remote)
	})
	return c, nil
}

// Path is the ICE candidate pair a session's media takes: the transport
// protocol between the gateway and the next hop ("udp", or "tcp" over the
// ICE-TCP port) and both candidate types ("host", "srflx", "prflx",
// "relay"). A client behind TURN shows Remote "relay" (or "prflx" when its
// relayed address reached the gateway before its candidate did).
type Path struct {
	Protocol string
	Local    string
	Remote   string
}

// Path returns the currently selected pair; ok is false before ICE chose one.
func (c *Conn) Path() (Path, bool) {
	if p := c.path.Load(); p != nil {
		return *p, true
	}
	return Path{}, false
}

// ID is the session id (the last segment of the Location).
func (c *Conn) ID() string { return c.id }

// Device is the ?device= the client asked for ("" if none).
func (c *Conn) Device() string { return c.device }

// Sender is the paced outbound audio path.
func (c *Conn) Sender() *Sender { return c.sender }

// Ready is closed once ICE is connected and the events channel is open.
func (c *Conn) Ready() <-chan struct{} { return c.ready }

// Done is closed after the Conn has fully stopped.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the Conn ended (nil while it runs).
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Stats returns a snapshot of the counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.FramesOut = c.sender.SentFrames()
	return s
}

// ETag identifies the current ICE session (it changes on ICE restart).
func (c *Conn) ETag() string {
	c.sigMu.Lock()
	defer c.sigMu.Unlock()
	return c.etag
}

func (c *Conn) touch() { c.lastTouch.Store(time.Now().UnixNano()) }

// SendEvent sends one event (JSON text) on the events channel. Before the
// channel opens, events queue (up to Config.EventQueue) and are flushed in
// order on open. data is copied when queued.
func (c *Conn) SendEvent(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return ErrClosed
	}
	if !c.dcOpen {
		if len(c.pending) >= c.cfg.EventQueue {
			return ErrEventQueueFull
		}
		c.pending = append(c.pending, append([]byte(nil), data...))
		return nil
	}
	// Sent under mu so events leave in the order SendEvent was called.
	if err := c.dc.SendText(string(data)); err != nil {
		return fmt.Errorf("rtc: send event: %w", err)
	}
	c.stats.EventsOut++
	return nil
}

// Data channel flow control for PumpEvents: stop pulling above the high
// water mark, resume when pion reports the buffer below the low one.
const (
	dcHighWater = 1 << 20
	dcLowWater  = 256 << 10
)

// PumpEvents starts a goroutine, owned and joined by the Conn, that waits
// for the events channel to open and then sends every message next returns,
// in order, holding back while the channel's send buffer is above 1 MiB (a
// slow client) so the producer's own bounded log decides what to drop. next
// must return when its ctx ends. If next fails, the Conn ends with that
// error as its reason. Call it at most once, from the SessionFactory or
// after it.
func (c *Conn) PumpEvents(next func(ctx context.Context) ([]byte, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.wg.Go(func() { c.pump(next) })
}

func (c *Conn) pump(next func(ctx context.Context) ([]byte, error)) {
	ctx := c.sendCtx
	select {
	case <-c.ready:
	case <-ctx.Done():
		return
	}
	for {
		b, err := next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.stop(fmt.Errorf("rtc: event source: %w", err))
			}
			return
		}
		for {
			c.mu.Lock()
			over := c.dc.BufferedAmount() > dcHighWater
			c.mu.Unlock()
			if !over {
				break
			}
			select {
			case <-c.dcLow:
			case <-ctx.Done():
				return
			}
		}
		if err := c.SendEvent(b); err != nil {
			if ctx.Err() == nil {
				c.stop(fmt.Errorf("rtc: event pump: %w", err))
			}
			return
		}
	}
}

// wire registers pion callbacks and the sender track. Called once before
// the remote description is applied.
func (c *Conn) wire(sess Session) error {
	c.sess = sess
	rtpSender, err := c.pc.AddTrack(c.track)
	if err != nil {
		return fmt.Errorf("rtc: add track: %w", err)
	}
	// Drain RTCP so the interceptors (NACK responder, reports) run.
	c.wg.Go(func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := rtpSender.Read(buf); err != nil {
				return
			}
		}
	})
	c.pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if tr.Kind() != webrtc.RTPCodecTypeAudio {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closing {
			return
		}
		if c.reading {
			// One inbound audio stream per session: the sink is fed by
			// a single goroutine. Extra tracks are left unread.
			c.log.Warn("rtc: extra audio track ignored", "ssrc", uint32(tr.SSRC()))
			return
		}
		c.reading = true
		c.wg.Go(func() { c.readLoop(tr) })
	})
	c.pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() != EventsLabel {
			c.log.Warn("rtc: unexpected data channel", "label", dc.Label())
			return
		}
		dc.OnOpen(func() { c.onDCOpen(dc) })
		dc.OnMessage(func(m webrtc.DataChannelMessage) {
			c.touch()
			c.mu.Lock()
			c.stats.EventsIn++
			c.mu.Unlock()
			c.sess.OnEvent(m.Data)
		})
	})
	c.pc.OnICEConnectionStateChange(func(s webrtc.ICEConnectionState) {
		c.iceState.Store(int32(s))
		c.kickState()
	})
	c.pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		c.pcState.Store(int32(s))
		c.kickState()
	})
	return nil
}

func (c *Conn) onDCOpen(dc *webrtc.DataChannel) {
	c.mu.Lock()
	if c.closing || c.dc != nil {
		c.mu.Unlock()
		return
	}
	c.dc = dc
	dc.SetBufferedAmountLowThreshold(dcLowWater)
	dc.OnBufferedAmountLow(func() {
		select {
		case c.dcLow <- struct{}{}:
		default:
		}
	})
	for _, ev := range c.pending {
		if err := dc.SendText(string(ev)); err != nil {
			c.log.Warn("rtc: flush event failed", "err", err)
			break
		}
		c.stats.EventsOut++
	}
	c.pending = nil
	c.dcOpen = true
	c.mu.Unlock()
	c.checkReady()
}

func (c *Conn) kickState() {
	select {
	case c.iceKick <- struct{}{}:
	default:
	}
}

// live reports whether media can flow: ICE connected and DTLS up (a packet
// written before SRTP is ready is silently dropped by pion).
func (c *Conn) live() bool {
	ice := webrtc.ICEConnectionState(c.iceState.Load())
	return webrtc.PeerConnectionState(c.pcState.Load()) == webrtc.PeerConnectionStateConnected &&
		(ice == webrtc.ICEConnectionStateConnected || ice == webrtc.ICEConnectionStateCompleted)
}

func (c *Conn) checkReady() {
	c.mu.Lock()
	open := c.dcOpen
	c.mu.Unlock()
	if open && c.live() {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

func (c *Conn) readLoop(tr *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, _, err := tr.Read(buf)
		if err != nil {
			return
		}
		if err := pkt.Unmarshal(buf[:n]); err != nil {
			continue
		}
		now := time.Now()
		c.lastTouch.Store(now.UnixNano())
		c.mu.Lock()
		c.stats.PacketsIn++
		c.stats.BytesIn += int64(len(pkt.Payload))
		if c.seqPrimed {
			if d := pkt.SequenceNumber - c.lastSeq; d > 1 && d < 1<<15 {
				c.stats.GapsIn += int64(d - 1)
			}
		}
		if !c.seqPrimed || int16(pkt.SequenceNumber-c.lastSeq) > 0 {
			c.lastSeq, c.seqPrimed = pkt.SequenceNumber, true
		}
		c.mu.Unlock()
		c.sess.OnRTP(Packet{SequenceNumber: pkt.SequenceNumber, Timestamp: pkt.Timestamp, Marker: pkt.Marker, Payload: pkt.Payload, Arrival: now})
	}
}

// answer applies an offer and returns the answer SDP after gathering.
func (c *Conn) answer(ctx context.Context, offer string) (string, error) {
	c.sigMu.Lock()
	defer c.sigMu.Unlock()
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", &OfferError{Kind: ErrMalformedSDP, Detail: "rejected by WebRTC stack: " + err.Error()}
	}
	ans, err := c.pc.CreateAnswer(nil)
	if err != nil {
		return "", fmt.Errorf("rtc: create answer: %w", err)
	}
	gathered := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(ans); err != nil {
		return "", fmt.Errorf("rtc: set local description: %w", err)
	}
	t := time.NewTimer(c.cfg.GatherTimeout)
	defer t.Stop()
	select {
	case <-gathered:
	case <-t.C:
		// Answer with whatever was gathered; trickle can still add more.
	case <-ctx.Done():
		return "", fmt.Errorf("rtc: gather: %w", ctx.Err())
	}
	local := c.pc.LocalDescription()
	if local == nil {
		return "", errors.New("rtc: no local description")
	}
	c.remoteOffer = offer
	if f, err := localFragment(local.SDP); err == nil {
		c.etag = `"` + f.Ufrag + `"`
	}
	return local.SDP, nil
}

// trickle applies a PATCH fragment: new credentials mean an ICE restart and
// return the server's new fragment; otherwise candidates are added and the
// returned fragment is nil.
func (c *Conn) trickle(ctx context.Context, f *Fragment) (*Fragment, error) {
	c.sigMu.Lock()
	remote := c.pc.RemoteDescription()
	prevUfrag := ""
	if remote != nil {
		if rf, err := localFragment(remote.SDP); err == nil {
			prevUfrag = rf.Ufrag
		}
	}
	restart := f.Ufrag != "" && f.Ufrag != prevUfrag
	if !restart {
		defer c.sigMu.Unlock()
		for _, cand := range f.Candidates {
			mid := cand.Mid
			init := webrtc.ICECandidateInit{Candidate: cand.Candidate}
			if mid != "" {
				init.SDPMid = &mid
			}
			if err := c.pc.AddICECandidate(init); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrBadFragment, err)
			}
		}
		return nil, nil
	}
	offer, err := restartOffer(c.remoteOffer, f)
	c.sigMu.Unlock()
	if err != nil {
		return nil, err
	}
	if _, err := c.answer(ctx, offer); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.stats.ICERestarts++
	c.mu.Unlock()
	c.sigMu.Lock()
	defer c.sigMu.Unlock()
	return localFragment(c.pc.LocalDescription().SDP)
}

// start launches the sender and the supervisor after a successful answer.
func (c *Conn) start(onClosed func(*Conn, error)) {
	c.onClosed = onClosed
	c.wg.Go(func() { c.sender.run(c.sendCtx) })
	go c.supervise() // joined through c.done by Close and Handler.Close
}

// stop asks the supervisor to end the Conn with reason (first reason wins).
func (c *Conn) stop(reason error) {
	c.stopOnce.Do(func() {
		c.stopReason = reason
		close(c.stopCh)
	})
}

// End asks the Conn to end with reason (nil means ErrClosed) and returns at
// once; Done is closed when it has. Unlike Close it is safe to call from
// Session callbacks and Sender onDone functions.
func (c *Conn) End(reason error) {
	if reason == nil {
		reason = ErrClosed
	}
	c.stop(reason)
}

// Close ends the session (reason ErrClosed unless another came first) and
// waits until every goroutine has stopped or ctx ends. Never call it from a
// Session callback or a Sender onDone function (it would wait for the
// goroutine it runs on); use End there.
func (c *Conn) Close(ctx context.Context) error {
	c.stop(ErrClosed)
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rtc: close %s: %w", c.id, ctx.Err())
	}
}

func (c *Conn) supervise() {
	period := min(c.cfg.IdleTimeout/4, time.Second)
	idle := time.NewTicker(period)
	defer idle.Stop()
	var graceC <-chan time.Time
	var grace *time.Timer
	var reason error
loop:
	for {
		select {
		case <-c.stopCh:
			reason = c.stopReason
			break loop
		case <-c.iceKick:
			live := c.live()
			c.sender.setLive(live)
			if live {
				c.checkReady()
			}
			if webrtc.PeerConnectionState(c.pcState.Load()) == webrtc.PeerConnectionStateClosed {
				// pion closes the connection itself when the peer sends a
				// DTLS close_notify: the client quit without DELETE.
				reason = ErrPeerClosed
				break loop
			}
			st := webrtc.ICEConnectionState(c.iceState.Load())
			if st == webrtc.ICEConnectionStateFailed {
				if grace == nil {
					grace = time.NewTimer(c.cfg.ICEFailedGrace)
					graceC = grace.C
					c.log.Warn("rtc: ICE failed, waiting for restart", "grace", c.cfg.ICEFailedGrace)
				}
			} else if grace != nil && st != webrtc.ICEConnectionStateClosed {
				grace.Stop()
				grace, graceC = nil, nil
			}
		case <-graceC:
			reason = ErrICEFailed
			break loop
		case now := <-idle.C:
			if now.Sub(time.Unix(0, c.lastTouch.Load())) > c.cfg.IdleTimeout {
				reason = ErrIdle
				break loop
			}
		}
	}
	if grace != nil {
		grace.Stop()
	}
	c.teardown(reason)
}

// teardown runs on the supervisor goroutine only (never a pion callback).
func (c *Conn) teardown(reason error) {
	c.mu.Lock()
	c.closing = true
	c.pending = nil
	c.mu.Unlock()
	c.sendStop()
	err := c.pc.GracefulClose()
	c.wg.Wait()
	if err != nil {
		c.log.Warn("rtc: close peer connection", "err", err)
	}
	c.log.Info("rtc: session closed", "reason", reason)
	if c.sess != nil {
		c.sess.Closed(reason)
	}
	c.err = reason
	if c.onClosed != nil {
		c.onClosed(c, reason)
	}
	close(c.done)
}

// abort tears down a Conn that never started (answer failed).
func (c *Conn) abort() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.sendStop()
	_ = c.pc.GracefulClose()
	c.wg.Wait()
	if c.sess != nil {
		c.sess.Closed(ErrClosed)
	}
	c.err = ErrClosed
	close(c.done)
}
