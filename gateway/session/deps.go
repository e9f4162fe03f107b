package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// Converser answers one user turn (the model router). It calls onDelta with
// each streamed piece of the reply text, in order, from any goroutine, and
// returns the whole reply. It must return promptly once ctx is cancelled.
// A turn that fails may still return the engine's assessment in
// Reply.Safety with the error (a reply whose safety was valid but whose
// message was not): the session shows its card before the error.
type Converser interface {
	Converse(ctx context.Context, req ConverseRequest, onDelta func(string)) (Reply, error)
}

// ConverseRequest is one turn's input.
type ConverseRequest struct {
	SessionID string
	PartnerID string
	EndUserID string
	Region    string
	Text      string
	// History is the conversation so far, oldest first, without Text.
	History []Message
	// SafetyFinal, when the Converser knows the engine's assessment before
	// the reply text (a provider with no safety channel, or an engine that
	// sends safety first), may be called once before the first onDelta. The
	// session then emits the safety card and streams deltas as they come.
	// Without the call, deltas are held until Converse returns. Never nil.
	SafetyFinal func(engine safety.Assessment)
}

// Message is one entry of the conversation history.
type Message struct {
	Role string `json:"role"` // "user" or "assistant"
	Text string `json:"text"`
}

// Reply is the router's answer to a turn.
type Reply struct {
	Message         string
	Safety          safety.Assessment
	ProposedActions []Action
	Model           string
	Provider        string
}

// Action is an action the engine proposes; the person must approve it.
type Action struct {
	ID        string
	Type      string
	Title     string
	Summary   string
	Input     json.RawMessage
	ExpiresAt time.Time
}

// SafetyLayer is the safety package as the session uses it.
type SafetyLayer interface {
	// Assess runs the local detector on one user text (history: the
	// earlier user texts, oldest first) and returns its assessment with the
	// catalog's resources for region ("" = unknown: international
	// directory plus local emergency number).
	Assess(history []string, text, region string) safety.Assessment
	// Merge combines the engine's and the local assessment; it must never
	// rank below either or drop a resource (the session re-imposes
	// that floor with safety.Guard).
	Merge(engine, local safety.Assessment) safety.Assessment
}

// CardLayout lays cards out in display-op pages for one visual surface of
// a device: the glasses engine (NewGlassesLayout). Every page carries the
// title and n/N and no text is dropped. When its own layout fails the
// engine falls back to its plain layout and returns those pages with an
// error wrapping glasses.ErrFallback; no pages with an error means the
// surface gets the structured card without pages (never no card).
type CardLayout interface {
	// SafetyPages lays out the safety card cardID with resources res.
	SafetyPages(cardID string, res []safety.Resource, device string, s devices.Surface) ([]glasses.OpsPage, error)
	// PromptPages lays out an approve/decline prompt: the controls
	// glasses.ControlApprove and ControlDecline on the last page, focus on
	// Decline.
	PromptPages(cardID, title, body, device string, s devices.Surface) ([]glasses.OpsPage, error)
}

// ActionHandler carries out an approved action or records a declined one
// upstream (the Partner API's approve/result calls). Optional.
type ActionHandler interface {
	Approve(ctx context.Context, sessionID string, a Action, d Decision) error
	Decline(ctx context.Context, sessionID string, a Action, d Decision) error
}

// How a decision was made (Decision.Via). Only ViaTap, ViaKey, ViaSpeech
// and ViaText can approve; expiry and hang-up only ever decline.
const (
	ViaTap = "tap"
	ViaKey = "key"
	// ViaSpeech: a clear spoken answer (a voice transcript, SubmitTurn) to
	// the spoken offer.
	ViaSpeech = "speech"
	// ViaText: a clear typed answer (input.text) to the offer in chat.
	ViaText   = "text"
	ViaExpiry = "expiry"
	ViaHangUp = "hangup"
)

// Decision.Surface of answers to the offer: spoken, or typed in chat.
const (
	SurfaceVoice = "voice"
	SurfaceChat  = "chat"
)

// Decision records who settled an action, where, how and when, for the
// audit trail and the partner's webhooks. It never carries message text.
type Decision struct {
	Approved bool
	// Via is one of the Via* constants.
	Via string
	// Surface is where the person decided: the client's surface for taps
	// ("phone", "glasses", "browser"), the key's surface, SurfaceVoice or
	// SurfaceChat for answers; empty for expiry and hang-up.
	Surface string
	At      time.Time
	// Reason is the client's short decline reason (never transcript text).
	Reason string
}

// Deps are a session's collaborators. Converser, Safety and Layout are
// required; Clock defaults to clock.Real, Logger to a discarding logger.
type Deps struct {
	Converser Converser
	Safety    SafetyLayer
	Layout    CardLayout
	Actions   ActionHandler
	// Counters counts cards shown and acknowledged (nil counts nothing).
	Counters *safety.Counters
	Clock    clock.Clock
	Logger   *slog.Logger
	// OnOpened is called when a Manager opens or resumes a session, outside
	// its locks (an inbox delivers held messages). Optional.
	OnOpened func(s *Session)
	// OnClosed is called once when a session closes (e.g. a Converser drops
	// its per-session engine thread). Optional.
	OnClosed func(s *Session)
	// Observer sees each turn's output in wire order (optional).
	Observer TurnObserver
	// Classifier is the second opinion on each user turn (the router's
	// safety slot, adapted by gateway/converse). Optional: nil adds
	// nothing to a turn, not even a goroutine.
	Classifier Classifier
	// ClassifyBudget is how long a turn's first reply text (and so its
	// first audio) waits for the Classifier, counted from the turn's start
	// (safety.classify_budget_ms); 0 never waits, so every raise is late.
	ClassifyBudget time.Duration
	// Admit is asked before a Manager opens a new session for owner (not a
	// resume): it returns the release to call when the session is gone, or
	// an error that Open returns as is (the owner's fair share is held:
	// gateway.Shares). Optional.
	Admit func(owner Owner) (release func(), err error)
}

// LocalSafety is the SafetyLayer on the safety package: its local detector
// with the embedded catalog, and its merge policy.
type LocalSafety struct {
	Detector *safety.Detector
	Catalog  *safety.Catalog
	// DefaultRegion is the deployment's region when the client names none.
	DefaultRegion string
}

// NewLocalSafety returns a LocalSafety with the default detector and the
// embedded catalog of verified resources.
func NewLocalSafety(defaultRegion string) (*LocalSafety, error) {
	d := safety.NewDetector()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("session: safety detector: %w", err)
	}
	c, err := safety.DefaultCatalog()
	if err != nil {
		return nil, fmt.Errorf("session: safety catalog: %w", err)
	}
	return &LocalSafety{Detector: d, Catalog: c, DefaultRegion: defaultRegion}, nil
}

// Assess implements SafetyLayer.
func (l *LocalSafety) Assess(history []string, text, region string) safety.Assessment {
	return l.Detector.Assess(history, text, l.Catalog, safety.RegionPrefs{User: region, Default: l.DefaultRegion})
}

// Merge implements SafetyLayer with safety.Merge.
func (l *LocalSafety) Merge(engine, local safety.Assessment) safety.Assessment {
	return safety.Merge(engine, local)
}

// Resources is the card for a level the Classifier gave: the catalog's
// resources for region (Resourcer).
func (l *LocalSafety) Resources(level safety.Level, region string) []safety.Resource {
	return safety.ResourcesFor(level, l.Catalog, safety.RegionPrefs{User: region, Default: l.DefaultRegion})
}

// Resourcer is what a SafetyLayer may also offer: the resources of a card
// at level for region. A SafetyLayer without it gets the embedded
// catalog's (never an empty card).
type Resourcer interface {
	Resources(level safety.Level, region string) []safety.Resource
}

// TurnObserver sees a turn's output in wire order, each call right after
// the matching event was emitted. It sees every turn the person started
// (a consent answer too); replies the session starts on its own (an
// offer asked again, an action's result) are events only
// (reply.done with generated: true). It is the gateway-wide hook (the
// inbox, the partner's turn webhooks); a transport that acts on the output
// itself (a voice session speaking it) subscribes to its own Stream
// instead (Subscriber), in the order its client receives the events.
// Calls come from the session's turn goroutine, outside the locks of the
// session's parts (a turn's own gate may be held); they must not block
// for long nor call back into the turn.
type TurnObserver interface {
	SafetyCard(s *Session, card event.SafetyCard)
	ReplyDelta(s *Session, turnID, delta string)
	ReplyDone(s *Session, turnID, text string)
}
