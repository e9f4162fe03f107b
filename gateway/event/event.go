package event

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// Type names an event on the wire.
type Type string

// Server → client event types.
const (
	TypeSessionCreated    Type = "session.created"
	TypeSessionTitle      Type = "session.title"
	TypeNotice            Type = "notice"
	TypeSpeechStarted     Type = "input.speech_started"
	TypeSpeechStopped     Type = "input.speech_stopped"
	TypeNothingHeard      Type = "input.nothing_heard"
	TypeTranscriptPartial Type = "transcript.partial"
	TypeTranscriptFinal   Type = "transcript.final"
	TypeReplyDelta        Type = "reply.delta"
	TypeReplyDone         Type = "reply.done"
	TypeReplyAudioStarted Type = "reply.audio_started"
	TypeReplyAudioStopped Type = "reply.audio_stopped"
	TypeReplyInterrupted  Type = "reply.interrupted"
	TypeSafetyCard        Type = "safety.card"
	TypeDisplayCard       Type = "display.card"
	TypeDisplayClear      Type = "display.clear"
	TypeCaption           Type = "caption"
	TypeActionProposed    Type = "action.proposed"
	TypeActionUpdated     Type = "action.updated"
	TypeError             Type = "error"
)

// Client → server event types.
const (
	TypeHello           Type = "hello"
	TypeInputText       Type = "input.text"
	TypeDisplayAck      Type = "display.ack"
	TypeInputKey        Type = "input.key"
	TypeActionApprove   Type = "action.approve"
	TypeActionDecline   Type = "action.decline"
	TypePlaybackStarted Type = "playback.started"
	TypeResponseCancel  Type = "response.cancel"
	TypeSessionRename   Type = "session.rename"
)

// Envelope is the header every server event carries beside its payload.
type Envelope struct {
	Type      Type   `json:"type"`
	Seq       int64  `json:"seq"`
	SessionID string `json:"session_id"`
	// At is the server time the event was created, in epoch milliseconds.
	At int64 `json:"at"`
}

// Encode renders one server event: the envelope fields followed by the
// payload's fields in one flat JSON object. payload must marshal to a JSON
// object (or be nil) and must not use the envelope's field names.
func Encode(env Envelope, payload any) ([]byte, error) {
	head, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("event: encode %s envelope: %w", env.Type, err)
	}
	if payload == nil {
		return head, nil
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("event: encode %s payload: %w", env.Type, err)
	}
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("event: encode %s payload: %w", env.Type, ErrPayloadNotObject)
	}
	if len(bytes.TrimSpace(body[1:len(body)-1])) == 0 {
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, body[1:]...)
	return out, nil
}

// SessionCreated opens every session and every resumed connection.
type SessionCreated struct {
	ResumeToken string `json:"resume_token"`
	// ResumeWindowMS is how long the session waits for a reconnect.
	ResumeWindowMS int64 `json:"resume_window_ms"`
	Resumed        bool  `json:"resumed"`
	// ReplayFrom is the first seq replayed on this connection after it.
	ReplayFrom int64         `json:"replay_from"`
	Device     string        `json:"device"`
	Surfaces   []SurfaceInfo `json:"surfaces"`
	// Title is the session's current title ("" when it has none).
	Title string `json:"title"`
}

// Who named a session (SessionTitle.By).
const (
	TitleByUser = "user"
	TitleByAuto = "auto"
)

// SessionTitle says the session's title changed: By is "user" (the
// person's own rename or clear, Title "") or "auto" (named after the first
// turn). Every surface shows it, including a window title.
type SessionTitle struct {
	Title string `json:"title"`
	By    string `json:"by"`
}

// SurfaceInfo describes one display surface of the session's device.
type SurfaceInfo struct {
	ID           string `json:"id"`
	Profile      string `json:"profile"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	AckTimeoutMS int64  `json:"ack_timeout_ms"`
}

// Notice is a message for the person, e.g. the AI disclosure at session
// start (kind "ai_disclosure"), an unacknowledged safety card
// (kind "safety_unacknowledged"; Surface names the surface that did not
// confirm it) or a voice turn no recogniser was free for (kind "busy", with
// its turn id; spoken).
type Notice struct {
	Kind string `json:"kind"`
	// Text is what the session's display shows (the full disclosure on a
	// screen, its one line on a HUD).
	Text string `json:"text"`
	// Spoken is what a voice session says (ai_disclosure only): the short
	// spoken disclosure, the same on every device.
	Spoken  string `json:"spoken,omitempty"`
	Surface string `json:"surface,omitempty"`
	CardID  string `json:"card_id,omitempty"`
	// TurnID is the voice turn a "busy" notice answers.
	TurnID string `json:"turn_id,omitempty"`
}

// Notice kinds.
const (
	NoticeAIDisclosure         = "ai_disclosure"
	NoticeSafetyUnacknowledged = "safety_unacknowledged"
)

// Speech marks the start or end of user speech in a voice session, in
// milliseconds of session audio.
type Speech struct {
	TurnID  string `json:"turn_id"`
	AudioMS int64  `json:"audio_ms"`
}

// SpeechStopped says the turn detector ended a voice turn. AudioMS is the
// true end of speech (the end of the last speech frame, in milliseconds of
// session audio) and EndOfTurnMS how much audio later the detector decided
// the turn was over (its silence hangover and VAD release): the person
// stopped speaking EndOfTurnMS before the event was created.
type SpeechStopped struct {
	TurnID      string `json:"turn_id"`
	AudioMS     int64  `json:"audio_ms"`
	EndOfTurnMS int64  `json:"end_of_turn_ms"`
}

// Reasons of NothingHeard.
const (
	NothingHeardNoWords        = "no_words"        // the recogniser found no words
	NothingHeardNotTranscribed = "not_transcribed" // the recogniser failed (an error event precedes)
)

// NothingHeard ends a voice turn that gets no reply: its speech gave no
// words, or could not be transcribed. It is the turn's last event.
type NothingHeard struct {
	TurnID string `json:"turn_id"`
	Reason string `json:"reason"`
}

// Transcript is a partial or final transcript of the user's turn.
type Transcript struct {
	TurnID string `json:"turn_id"`
	Text   string `json:"text"`
}

// ReplyDelta is one streamed piece of the reply text.
type ReplyDelta struct {
	TurnID string `json:"turn_id"`
	Delta  string `json:"delta"`
}

// ReplyDone ends a reply; Text is the whole reply.
type ReplyDone struct {
	TurnID   string       `json:"turn_id"`
	Text     string       `json:"text"`
	Model    string       `json:"model,omitempty"`
	Provider string       `json:"provider,omitempty"`
	Level    safety.Level `json:"safety_level"`
	// Generated is true when the session itself wrote the reply (a consent
	// question, its acknowledgement, an action's result) and no model did.
	Generated bool `json:"generated,omitempty"`
}

// ReplyAudio marks the start or end of reply audio playout. Latency is
// set on reply.audio_started of a reply to speech (not on the notice, typed
// turns or reply.audio_stopped).
type ReplyAudio struct {
	TurnID  string       `json:"turn_id"`
	Latency *TurnLatency `json:"latency,omitempty"`
}

// TurnLatency splits the time from the true end of speech to the reply's
// first audio packet on the wire into contiguous segments, in milliseconds
// of the gateway's clock; they sum to TotalMS exactly. A stage the reply
// reached only after its first packet (spoken safety resources can play
// before the reply text) counts 0.
type TurnLatency struct {
	// EndOfTurnMS: true end of speech → the turn detector ends the turn.
	EndOfTurnMS int64 `json:"end_of_turn_ms"`
	// TranscriptionMS: → the final transcript.
	TranscriptionMS int64 `json:"transcription_ms"`
	// LLMTTFTMS: → the first reply text released (safety first, then the
	// model's first token).
	LLMTTFTMS int64 `json:"llm_ttft_ms"`
	// TTSTTFBMS: → the first synthesised audio (a whole first sentence, any
	// earlier playout still going out, the speak provider's first byte).
	TTSTTFBMS int64 `json:"tts_ttfb_ms"`
	// FirstPacketMS: → the first reply packet on the wire (pacing).
	FirstPacketMS int64 `json:"first_packet_ms"`
	TotalMS       int64 `json:"total_ms"`
}

// ReplyInterrupted says a reply was cut short; Heard is the text that was
// delivered (shown or played) before the interruption, and the only part of
// the reply the session's history keeps.
type ReplyInterrupted struct {
	TurnID string `json:"turn_id"`
	Heard  string `json:"heard"`
	Reason string `json:"reason"`
}

// SafetyCard carries the safety resources of a turn, in full canonical
// shape and in the order they must appear, plus the pages laid out for every
// surface of the session. It always precedes the turn's first reply.delta.
type SafetyCard struct {
	CardID          string            `json:"card_id"`
	TurnID          string            `json:"turn_id"`
	RequiresAck     bool              `json:"requires_ack"`
	Level           safety.Level      `json:"level"`
	DisplayRequired bool              `json:"display_required"`
	Source          safety.Source     `json:"source,omitempty"`
	Resources       []safety.Resource `json:"resources"`
	Surfaces        []CardSurface     `json:"surfaces"`
	// MustSpeak is true when the device cannot confirm renders or has no
	// display: the resources must also be spoken.
	MustSpeak bool `json:"must_speak"`
	// Resend counts re-sends after a missing acknowledgement (0 first time).
	Resend int `json:"resend"`
}

// CardSurface is a card laid out for one surface.
type CardSurface struct {
	Surface      string `json:"surface"`
	Profile      string `json:"profile"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	AckTimeoutMS int64  `json:"ack_timeout_ms"`
	// Pages are the glasses package's display-op pages for the surface.
	Pages []glasses.OpsPage `json:"pages"`
}

// DisplayCard asks one surface to show one page of a card.
type DisplayCard struct {
	CardID  string          `json:"card_id"`
	Kind    string          `json:"kind"`
	Surface string          `json:"surface"`
	Page    glasses.OpsPage `json:"page"`
}

// DisplayClear asks a surface to clear a card.
type DisplayClear struct {
	CardID  string `json:"card_id,omitempty"`
	Surface string `json:"surface"`
}

// Caption is a line of caption text for displays.
type Caption struct {
	TurnID  string `json:"turn_id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	Final   bool   `json:"final"`
}

// Action is an action VERA proposes; the person approves or declines it.
type Action struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Title     string          `json:"title"`
	Summary   string          `json:"summary,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Status    string          `json:"status"`
	ExpiresAt int64           `json:"expires_at,omitempty"`
}

// ActionProposed carries a newly proposed action and, per visual surface,
// its approve/decline prompt laid out in pages (controls "approve" and
// "decline" on the last page, focus on "decline"). A surface shows a
// prompt only while no safety card is on it.
type ActionProposed struct {
	TurnID   string        `json:"turn_id"`
	Action   Action        `json:"action"`
	Surfaces []CardSurface `json:"surfaces,omitempty"`
}

// ActionUpdated reports a new status of an action: approved, declined,
// expired or failed (the approval could not be carried out); after
// approved, the partner's result: succeeded or failed. Via says how a
// decision was made (tap, key, speech, text, expiry, hangup).
type ActionUpdated struct {
	ActionID string `json:"action_id"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Via      string `json:"via,omitempty"`
}

// ErrorType is one of the Partner API's error types: the gateway's own
// (gateway.ErrorType), so the event channel and the HTTP envelope share
// one set.
type ErrorType = gateway.ErrorType

// Error types used on the event channel, by their event-protocol names.
const (
	ErrInvalidRequest    = gateway.InvalidRequest
	ErrAuthentication    = gateway.AuthenticationError
	ErrPermission        = gateway.PermissionError
	ErrNotFound          = gateway.NotFound
	ErrConflict          = gateway.Conflict
	ErrRateLimited       = gateway.RateLimited
	ErrEngineUnavailable = gateway.EngineUnavailable
	ErrInternal          = gateway.InternalError
)

// Error is the error event's payload: {"error":{"type","message"}}.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the Partner API error envelope's inner object. Field names the
// offending field and EventType the offending client event, when known.
type ErrorBody struct {
	Type      ErrorType `json:"type"`
	Message   string    `json:"message"`
	Field     string    `json:"field,omitempty"`
	EventType string    `json:"event_type,omitempty"`
}
