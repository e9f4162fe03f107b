package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// ErrNilEvent: Handle was given no event.
var ErrNilEvent = errors.New("nil event")

// ErrUnknownAction: action.approve/decline named no pending action.
var ErrUnknownAction = errors.New("session: unknown or settled action")

// Handle applies one decoded client event. Errors are the client's fault;
// the transport reports them as an error event (Handle already did for the
// errors it returns wrapped in *ClientError) and keeps the connection.
func (s *Session) Handle(ctx context.Context, ev event.Client) error {
	if ev == nil {
		return fmt.Errorf("session: handle: %w", ErrNilEvent)
	}
	var err error
	switch e := ev.(type) {
	case *event.InputText:
		s.submitInput(turnInput{text: e.Text, via: ViaText})
	case *event.DisplayAck:
		err = s.cards.ack(e, s.device().region)
	case *event.InputKey:
		err = s.key(ctx, e)
	case *event.ActionApprove:
		err = s.settleAction(ctx, e.ActionID, Decision{Approved: true, Via: ViaTap, Surface: e.Surface})
	case *event.ActionDecline:
		err = s.settleAction(ctx, e.ActionID, Decision{Via: ViaTap, Surface: e.Surface, Reason: e.Reason})
	case *event.PlaybackStarted:
		// Voice transports measure latency from it; chat has no audio.
	case *event.SessionRename:
		s.Rename(*e.Title)
	case *event.ResponseCancel:
		s.cancelTurn(e.TurnID)
	case *event.Hello:
		// A hello on a live connection re-negotiates the device.
		old := s.device()
		err = s.negotiate(e)
		if err == nil {
			created := s.created(true, 0)
			s.ev.emitSeq(event.TypeSessionCreated, func(seq int64) any { created.ReplayFrom = seq; return created })
			s.relayoutInForce(old)
		}
	default:
		err = fmt.Errorf("session: unhandled event %T", ev)
	}
	if err != nil {
		t := event.ErrInvalidRequest
		if errors.Is(err, ErrUnknownCard) || errors.Is(err, ErrUnknownAction) {
			t = event.ErrNotFound
		}
		s.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: t, Message: err.Error(), EventType: string(ev.EventType())}})
	}
	return err
}

// HandleJSON decodes one client event strictly and applies it; a bad event
// is answered with an error event naming the field, and the transport
// stays usable. Transports carrying JSON messages (the WebRTC data channel)
// use it; rate limiting stays with the transport.
func (s *Session) HandleJSON(ctx context.Context, data []byte) error {
	ev, err := event.Decode(data)
	if err != nil {
		var de *event.DecodeError
		if errors.As(err, &de) {
			s.Emit(event.TypeError, de.Payload())
		} else {
			s.EmitError(event.ErrInvalidRequest, err.Error())
		}
		return err
	}
	if h, ok := ev.(*event.Hello); ok && h.ResumeToken != "" {
		s.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: event.ErrConflict,
			Message: "this connection already has a session; reconnect to resume", EventType: string(event.TypeHello)}})
		return fmt.Errorf("session: %w", ErrAlreadyAttached)
	}
	return s.Handle(ctx, ev)
}

// ErrAlreadyAttached: a resume hello arrived on a connection that already
// carries a session.
var ErrAlreadyAttached = errors.New("connection already has a session")
