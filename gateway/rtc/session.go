package rtc

import (
	"context"
	"errors"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
)

// Reasons a Conn ends, passed to Session.Closed and returned by Conn.Err.
var (
	// ErrHangup: the client sent DELETE.
	ErrHangup = errors.New("rtc: hung up by client")
	// ErrPeerClosed: the client closed its PeerConnection (DTLS
	// close_notify) without DELETE.
	ErrPeerClosed = errors.New("rtc: closed by peer")
	// ErrIdle: no inbound media or events for Config.IdleTimeout.
	ErrIdle = errors.New("rtc: idle timeout")
	// ErrICEFailed: ICE stayed failed for Config.ICEFailedGrace.
	ErrICEFailed = errors.New("rtc: ICE failed")
	// ErrClosed: closed by the gateway (Conn.Close, drain, shutdown); also
	// returned by SendEvent after the Conn ended.
	ErrClosed = errors.New("rtc: connection closed")
	// ErrEventQueueFull: more than Config.EventQueue events were sent
	// before the data channel opened.
	ErrEventQueueFull = errors.New("rtc: event queue full before data channel open")
)

// Packet is one inbound RTP audio packet as it arrived (not reordered, not
// deduplicated: the jitter buffer downstream does that).
type Packet struct {
	SequenceNumber uint16
	Timestamp      uint32 // 48 kHz RTP clock
	Marker         bool
	// Payload is one Opus packet. It is only valid during OnRTP.
	Payload []byte
	// Arrival is the local receive time.
	Arrival time.Time
}

// AudioSink consumes inbound audio. OnRTP is called from one read-loop
// goroutine per connection; it must not block for long (feed a bounded
// buffer).
type AudioSink interface {
	OnRTP(p Packet)
}

// EventSink consumes client → server messages from the "events" data
// channel. data is only valid during the call.
type EventSink interface {
	OnEvent(data []byte)
}

// Session is the conversation layer's per-connection object.
type Session interface {
	AudioSink
	EventSink
	// Closed is called exactly once, after the Conn's media goroutines and
	// pion's callbacks have stopped (no OnRTP or OnEvent follows it), with
	// the reason (ErrHangup, ErrPeerClosed, ErrIdle,
	// ErrICEFailed, ErrClosed).
	Closed(reason error)
}

// SessionInfo describes a new connection to the SessionFactory.
type SessionInfo struct {
	ID         string
	Device     string            // from ?device=, may be empty (the hello can name it)
	Principal  gateway.Principal // what Authorize returned
	Offer      *Offer
	RemoteAddr string
}

// SessionFactory creates the Session for a new Conn before the answer is
// made. It may call c.SendEvent (events queue until the data channel opens),
// c.PumpEvents and c.Sender(). ctx is the POST request's: it ends when the
// answer is sent, so do not keep it. Return a *gateway.Error to refuse with a
// specific status.
type SessionFactory func(ctx context.Context, info SessionInfo, c *Conn) (Session, error)
