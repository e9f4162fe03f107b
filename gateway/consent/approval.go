package consent

import (
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Config bounds a prompt. Decoded from YAML under "consent".
type Config struct {
	// Expiry is how long a proposed action waits for a decision (the
	// Partner API's 24 h).
	Expiry time.Duration `yaml:"expiry"`
	// AnswerWindow is how long after the prompt is spoken an answer counts
	// as an answer to it; silence that long asks again.
	AnswerWindow time.Duration `yaml:"answer_window"`
	// MaxAsks bounds how often the prompt is spoken (the first time
	// included); after that it waits for a tap or key.
	MaxAsks int `yaml:"max_asks"`
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{Expiry: 24 * time.Hour, AnswerWindow: 8 * time.Second, MaxAsks: 3}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	if c.Expiry <= 0 || c.Expiry > 24*time.Hour {
		errs = append(errs, errors.New("consent.expiry: must be in (0, 24h]"))
	}
	if c.AnswerWindow < time.Second || c.AnswerWindow > time.Minute {
		errs = append(errs, errors.New("consent.answer_window: must be in [1s, 1m]"))
	}
	if c.MaxAsks < 1 || c.MaxAsks > 5 {
		errs = append(errs, errors.New("consent.max_asks: must be in [1, 5]"))
	}
	return errors.Join(errs...)
}

// Status of a prompt. Only Pending changes.
type Status string

const (
	Pending  Status = "pending"
	Approved Status = "approved"
	Declined Status = "declined"
	Expired  Status = "expired"
	// Withdrawn: the session ended (hang-up) before a decision. Not a
	// decline by the person, and never an approval.
	Withdrawn Status = "withdrawn"
)

// Means by which a decision was made.
const (
	ViaTap    = "tap"
	ViaKey    = "key"
	ViaSpeech = "speech"
	ViaClock  = "clock"
	ViaHangUp = "hangup"
)

// Focus is the prompt control that has keyboard focus.
type Focus string

const (
	FocusDecline Focus = "decline"
	FocusApprove Focus = "approve"
)

// Keys of input.key.
const (
	KeyNext   = "next"
	KeyPrev   = "prev"
	KeySelect = "select"
	KeyBack   = "back"
)

// Decision is the audit record of a settled prompt: no words, only who
// decided how, where and when.
type Decision struct {
	ActionID string
	Status   Status
	Via      string
	Surface  string
	At       time.Time
}

// Result tells the owner what to do after an input.
type Result struct {
	Status Status
	// Decided is true on the input that settled the prompt.
	Decided bool
	// AskAgain: speak the prompt again (ambiguous answer or silence).
	AskAgain bool
	// Ignored: the input did not concern the prompt (an answer outside the
	// answer window, input after the decision).
	Ignored bool
}

// ErrSettled: the prompt already has a decision.
var ErrSettled = errors.New("consent: prompt already settled")

// Approval is one approve/decline prompt. Not safe for concurrent use: its
// owner (the session) serialises calls.
type Approval struct {
	cfg      Config
	clock    clock.Clock
	actionID string
	expires  time.Time

	status    Status
	decision  Decision
	focus     Focus
	asks      int
	listening bool
	held      bool // the answer window is paused (prompt still playing)
	askedAt   time.Time
}

// NewApproval starts a pending prompt for actionID. expiresAt is the
// action's own expiry; zero or later than Config.Expiry from now is capped
// to that.
func NewApproval(cfg Config, clk clock.Clock, actionID string, expiresAt time.Time) (*Approval, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	if clk == nil {
		return nil, errors.New("consent: a clock is required")
	}
	if actionID == "" {
		return nil, errors.New("consent: action id is required")
	}
	limit := clk.Now().Add(cfg.Expiry)
	if expiresAt.IsZero() || expiresAt.After(limit) {
		expiresAt = limit
	}
	return &Approval{cfg: cfg, clock: clk, actionID: actionID, expires: expiresAt, status: Pending, focus: FocusDecline}, nil
}

// Status returns the prompt's status (after applying expiry).
func (a *Approval) Status() Status {
	a.Poll()
	return a.status
}

// Decision returns the audit record once the prompt is settled.
func (a *Approval) Decision() (Decision, bool) { return a.decision, a.status != Pending }

// Focus returns the control that has keyboard focus.
func (a *Approval) Focus() Focus { return a.focus }

// Asks returns how often the prompt has been spoken.
func (a *Approval) Asks() int { return a.asks }

// Spoken tells the prompt it was just spoken (offered or asked again): a
// spoken answer counts from now for Config.AnswerWindow. It reports false
// once MaxAsks is reached or the prompt is settled: do not speak it then.
func (a *Approval) Spoken() bool {
	if a.Poll().Decided || a.status != Pending || a.asks >= a.cfg.MaxAsks {
		return false
	}
	a.asks++
	a.listening = true
	a.held = false
	a.askedAt = a.clock.Now()
	return true
}

// Hold pauses the answer window while the prompt is still being delivered
// (its audio is playing) or where the transport has no notion of silence
// (typed chat: the next message is the answer, however long it takes). An
// answer still counts while held.
func (a *Approval) Hold() {
	if a.status == Pending && a.listening {
		a.held = true
	}
}

// Heard says the prompt finished playing: the answer window restarts from
// now. It does not count as an ask.
func (a *Approval) Heard() {
	if a.status == Pending && a.listening {
		a.held = false
		a.askedAt = a.clock.Now()
	}
}

// Listening reports whether a spoken answer counts now.
func (a *Approval) Listening() bool {
	a.Poll()
	return a.status == Pending && a.listening
}

// Quiet stops asking: no answer counts any more and the prompt is not
// spoken again; it waits, silently, for a tap or key until it expires
// (e.g. after a crisis utterance, when asking again would be wrong).
func (a *Approval) Quiet() {
	a.listening = false
	a.held = false
	a.asks = max(a.asks, a.cfg.MaxAsks)
}

// NextDeadline is when Poll next has something to do: the end of the answer
// window while listening, else the expiry.
func (a *Approval) NextDeadline() time.Time {
	if a.listening && !a.held {
		if d := a.askedAt.Add(a.cfg.AnswerWindow); d.Before(a.expires) {
			return d
		}
	}
	return a.expires
}

// Poll applies the clock: expiry settles the prompt as Expired; silence for
// the answer window asks again (bounded) or stops listening.
func (a *Approval) Poll() Result {
	if a.status != Pending {
		return Result{Status: a.status}
	}
	now := a.clock.Now()
	if !now.Before(a.expires) {
		return a.settle(Expired, ViaClock, "")
	}
	if a.listening && !a.held && !now.Before(a.askedAt.Add(a.cfg.AnswerWindow)) {
		a.listening = false
		return Result{Status: a.status, AskAgain: a.asks < a.cfg.MaxAsks}
	}
	return Result{Status: a.status}
}

// Tap applies a tap on a control: approve is the approve control.
func (a *Approval) Tap(approve bool, surface string) (Result, error) {
	if r := a.Poll(); a.status != Pending {
		return r, ErrSettled
	}
	if approve {
		return a.settle(Approved, ViaTap, surface), nil
	}
	return a.settle(Declined, ViaTap, surface), nil
}

// Key applies an input.key: next/prev move focus, select activates the
// focused control (focus starts on decline, so a stray Enter never
// approves), back dismisses the prompt from view without deciding.
func (a *Approval) Key(key, surface string) (Result, error) {
	if r := a.Poll(); a.status != Pending {
		return r, ErrSettled
	}
	switch key {
	case KeyNext, KeyPrev:
		if a.focus == FocusDecline {
			a.focus = FocusApprove
		} else {
			a.focus = FocusDecline
		}
		return Result{Status: a.status}, nil
	case KeySelect:
		if a.focus == FocusApprove {
			return a.settle(Approved, ViaKey, surface), nil
		}
		return a.settle(Declined, ViaKey, surface), nil
	case KeyBack:
		return Result{Status: a.status}, nil
	default:
		return Result{Status: a.status, Ignored: true}, fmt.Errorf("consent: unknown key %q", key)
	}
}

// Speech applies a transcribed utterance. It counts only within the answer
// window after the prompt was spoken; Yes approves, No declines, anything
// else (silence included) asks again while asks remain.
func (a *Approval) Speech(text, surface string) Result {
	if r := a.Poll(); a.status != Pending {
		return Result{Status: r.Status, Ignored: true}
	}
	if !a.listening {
		return Result{Status: a.status, Ignored: true}
	}
	switch Classify(text) {
	case Yes:
		return a.settle(Approved, ViaSpeech, surface)
	case No:
		return a.settle(Declined, ViaSpeech, surface)
	default:
		a.listening = false
		return Result{Status: a.status, AskAgain: a.asks < a.cfg.MaxAsks}
	}
}

// Unanswered records an utterance, heard while listening, that was not an
// answer to the prompt at all (Answer's addressed is false: another topic).
// It never decides: the prompt stops listening and asks again while asks
// remain.
func (a *Approval) Unanswered() Result {
	if r := a.Poll(); a.status != Pending {
		return Result{Status: r.Status, Ignored: true}
	}
	if !a.listening {
		return Result{Status: a.status, Ignored: true}
	}
	a.listening = false
	return Result{Status: a.status, AskAgain: a.asks < a.cfg.MaxAsks}
}

// HangUp withdraws the prompt: the session ended without a decision.
func (a *Approval) HangUp() Result {
	if r := a.Poll(); a.status != Pending {
		return r
	}
	return a.settle(Withdrawn, ViaHangUp, "")
}

func (a *Approval) settle(s Status, via, surface string) Result {
	a.status = s
	a.listening, a.held = false, false
	a.decision = Decision{ActionID: a.actionID, Status: s, Via: via, Surface: surface, At: a.clock.Now()}
	return Result{Status: s, Decided: true}
}
