package safety

import (
	"sync"
	"time"
)

// Disclosure texts per surface kind. They are honest and plain: VERA is an
// AI companion, not a person, a therapist or an emergency service (NY GBL
// §1702, CA SB 243 §22602, EU AI Act Art. 50; "not therapy" per IL HB 1806).
//
// DisclosureVoice is what every voice session speaks, whatever the device:
// short enough (under 4 s of espeak-ng at the gateway's rate, measured by
// gateway/voice's TestSpokenDisclosureIsShort) that the first reply is not
// held behind it, and it still says that VERA is an AI and not a person.
// Screens show DisclosureScreen beside it, the HUD its one line.
const (
	DisclosureHUD    = "VERA is an AI, not a person."
	DisclosureScreen = "You are talking with VERA, an AI companion. VERA is a computer program, not a human, not a therapist and not an emergency service. If you are in danger, call your local emergency number."
	DisclosureVoice  = "I'm VERA, an AI, not a person or a therapist."
)

// DisclosureText returns the disclosure for a surface kind; unknown kinds
// get the full screen text, which is never wrong, only longer.
func DisclosureText(kind SurfaceKind) string {
	switch kind {
	case SurfaceHUD:
		return DisclosureHUD
	case SurfaceVoice:
		return DisclosureVoice
	}
	return DisclosureScreen
}

// Disclosure is one session's AI-disclosure schedule: due at session start,
// then again once Interval has passed since the last disclosure was
// delivered, for as long as the session continues. Create one per session.
// It is safe for concurrent use.
type Disclosure struct {
	now   func() time.Time
	every time.Duration

	mu    sync.Mutex // guards last and shown
	last  time.Time
	shown bool
}

// NewDisclosure returns a schedule on the clock now (nil: time.Now; the
// gateway passes its clock's Now, tests a fake's) repeating
// every interval; an interval ≤ 0 or above MaxDisclosureInterval is taken as
// MaxDisclosureInterval, so the schedule is never laxer than the law.
func NewDisclosure(now func() time.Time, every time.Duration) *Disclosure {
	if now == nil {
		now = time.Now
	}
	if every <= 0 || every > MaxDisclosureInterval {
		every = MaxDisclosureInterval
	}
	return &Disclosure{now: now, every: every}
}

// Interval is the repeat interval in use.
func (d *Disclosure) Interval() time.Duration { return d.every }

// Due reports whether a disclosure must be delivered now.
func (d *Disclosure) Due() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dueLocked(d.now())
}

func (d *Disclosure) dueLocked(now time.Time) bool {
	return !d.shown || now.Sub(d.last) >= d.every
}

// NextDue is when the next disclosure falls due; before the first one it is
// the current time.
func (d *Disclosure) NextDue() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.shown {
		return d.now()
	}
	return d.last.Add(d.every)
}

// MarkShown records that a disclosure was delivered now.
func (d *Disclosure) MarkShown() {
	d.mu.Lock()
	d.last, d.shown = d.now(), true
	d.mu.Unlock()
}

// Take returns the disclosure text for kind and records it as delivered if
// one is due; otherwise it returns "", false. The check and the record are
// one step, so two surfaces racing deliver it once.
func (d *Disclosure) Take(kind SurfaceKind) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if !d.dueLocked(now) {
		return "", false
	}
	d.last, d.shown = now, true
	return DisclosureText(kind), true
}
