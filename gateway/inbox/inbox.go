package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Options are the inbox's collaborators.
type Options struct {
	// Lookup returns the partner owning an open session; ok is false when
	// no such session is open. Required.
	Lookup func(sessionID string) (partner string, ok bool)
	// Deliver starts a turn in the session from an inbox message (the
	// transcript shows text; the turn is spawned). It must not block on
	// the turn. Required.
	Deliver func(sessionID, text, source string) error
	// Busy reports whether the session is in a turn now; nil means the
	// inbox knows only about the turns it started.
	Busy func(sessionID string) bool
	// Ask shows the person an admission prompt (an approve/decline action
	// with id a.ActionID on every surface, offered once in speech). Nil
	// leaves held messages waiting until they expire.
	Ask func(a Admission)
	// Clock; nil is the wall clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Admission asks the person whether to let held messages of one source into
// a session after a restart.
type Admission struct {
	SessionID string
	// ActionID is what the person's action.approve / action.decline names;
	// IsAdmission recognises it.
	ActionID string
	Source   string
	// Name is the last part of Source: what the prompt says.
	Name  string
	Count int
}

// Title is a prompt title for the glasses and phone.
func (a Admission) Title() string { return fmt.Sprintf("Messages from %s", a.Name) }

// Summary is the prompt's body; it is also what is spoken.
func (a Admission) Summary() string {
	if a.Count == 1 {
		return fmt.Sprintf("A message from %s is waiting. Let it in?", a.Name)
	}
	return fmt.Sprintf("%d messages from %s are waiting. Let them in?", a.Count, a.Name)
}

// admitPrefix starts every admission action id.
const admitPrefix = "inbox_admit_"

// IsAdmission reports whether an action id is an inbox admission, so the
// action handler routes its approve/decline to Admit/Refuse.
func IsAdmission(actionID string) bool { return strings.HasPrefix(actionID, admitPrefix) }

// AdmissionID returns the action id of source's admission prompt.
func AdmissionID(source string) string {
	h := sha256.Sum256([]byte(source))
	return admitPrefix + hex.EncodeToString(h[:8])
}

// SourceName returns the last part of a source id: "acme.lookout" →
// "lookout" (dots, slashes and colons separate parts).
func SourceName(source string) string {
	if i := strings.LastIndexAny(source, "./:"); i >= 0 {
		return source[i+1:]
	}
	return source
}

// reservedNames are names VERA uses for its own messages; a source ending in
// one cannot send (the person could not tell it from VERA).
var reservedNames = []string{"vera", "peer", "schedule", "system", "user", "assistant", "safety"}

var validSource = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

// Inbox queues partner messages per session.
type Inbox struct {
	cfg   Config
	store Store
	o     Options
	log   *slog.Logger

	mu       sync.Mutex // mu guards the fields below
	queues   map[string][]queued
	reserved map[string]int       // places taken by posts still writing to the store
	inflight map[string]time.Time // session → when its inbox turn was delivered
	admitted map[string]map[string]bool
	asked    map[string]map[string]bool
}

type queued struct {
	Message
	held bool // found in the store at start: needs admission
}

// New loads the store's messages as held (they were queued before this
// process started), drops those older than Config.HoldFor, and returns the
// inbox.
func New(cfg Config, store Store, o Options) (*Inbox, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	if store == nil || o.Lookup == nil || o.Deliver == nil {
		return nil, ErrMissingDeps
	}
	o.Clock = clock.OrReal(o.Clock)
	in := &Inbox{cfg: cfg, store: store, o: o, log: o.Logger,
		queues: map[string][]queued{}, reserved: map[string]int{}, inflight: map[string]time.Time{},
		admitted: map[string]map[string]bool{}, asked: map[string]map[string]bool{}}
	if in.log == nil {
		in.log = slog.New(slog.DiscardHandler)
	}
	msgs, err := store.List()
	if err != nil {
		return nil, err
	}
	now := o.Clock.Now()
	for _, m := range msgs {
		if now.Sub(m.QueuedAt) > cfg.HoldFor {
			if err := store.Remove(m.Seq); err != nil {
				return nil, err
			}
			in.log.Info("inbox message expired", "session", m.SessionID, "source", m.Source)
			continue
		}
		in.queues[m.SessionID] = append(in.queues[m.SessionID], queued{Message: m, held: true})
	}
	return in, nil
}

// Route is POST /v1/sessions/{id}/messages, scope conversations:write,
// partner keys only.
func (in *Inbox) Route() gateway.Route {
	return gateway.Route{Method: http.MethodPost, Path: "/v1/sessions/{id}/messages", Scope: gateway.ScopeConversationsWrite,
		Idempotent: true, MaxBodyBytes: maxBody, Handler: http.HandlerFunc(in.handlePost)}
}

// maxBody admits a 16 KiB text even when JSON escapes every byte (\u00XX).
const maxBody = 6*MaxTextBytes + 4<<10

type postBody struct {
	Text   string `json:"text"`
	Source string `json:"source"`
}

type postReply struct {
	Outcome string `json:"outcome"`
}

func (in *Inbox) handlePost(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	p, _ := gateway.PrincipalFrom(r.Context())
	owner, ok := in.o.Lookup(id)
	if !ok || owner != p.PartnerID {
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no open session %q", id))
		return
	}
	var b postBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if aerr := checkMessage(b); aerr != nil {
		gateway.WriteError(w, r, aerr)
		return
	}
	if err := in.enqueue(id, p.PartnerID, b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	gateway.WriteJSON(w, http.StatusAccepted, postReply{Outcome: "queued"})
	in.pump(id)
}

func checkMessage(b postBody) *gateway.Error {
	switch {
	case strings.TrimSpace(b.Text) == "":
		return gateway.Errorf(gateway.InvalidRequest, "text must not be blank")
	case len(b.Text) > MaxTextBytes:
		return gateway.Errorf(gateway.InvalidRequest, "text is %d bytes; at most %d (16 KiB)", len(b.Text), MaxTextBytes)
	case !utf8.ValidString(b.Text):
		return gateway.Errorf(gateway.InvalidRequest, "text must be valid UTF-8")
	case b.Source == "":
		return gateway.Errorf(gateway.InvalidRequest, "source is required: who the message is from, e.g. \"acme.lookout\"")
	case !validSource.MatchString(b.Source):
		return gateway.Errorf(gateway.InvalidRequest, "source %q must be 1 to 128 characters of A-Z, a-z, 0-9 and . _ - : /, starting with a letter or digit", b.Source)
	case SourceName(b.Source) == "":
		return gateway.Errorf(gateway.InvalidRequest, "source %q must not end in a separator: its last part names it to the person", b.Source)
	case slices.Contains(reservedNames, strings.ToLower(SourceName(b.Source))):
		return gateway.Errorf(gateway.InvalidRequest, "source %q ends in %q, a name VERA uses for its own messages", b.Source, SourceName(b.Source))
	}
	return nil
}

func (in *Inbox) enqueue(sessionID, partner string, b postBody) error {
	// Reserve a place first so that concurrent posts cannot overshoot
	// MaxQueued while the store writes (the lock is not held across I/O).
	in.mu.Lock()
	if len(in.queues[sessionID])+in.reserved[sessionID] >= in.cfg.MaxQueued {
		in.mu.Unlock()
		return &gateway.Error{Type: gateway.RateLimited, RetryAfter: 30,
			Message: fmt.Sprintf("session %q already has %d queued messages, the most it holds", sessionID, in.cfg.MaxQueued)}
	}
	in.reserved[sessionID]++
	in.mu.Unlock()
	m, err := in.store.Add(Message{SessionID: sessionID, Partner: partner, Source: b.Source, Text: b.Text, QueuedAt: in.o.Clock.Now()})
	in.mu.Lock()
	if in.reserved[sessionID]--; in.reserved[sessionID] == 0 {
		delete(in.reserved, sessionID)
	}
	if err == nil {
		in.queues[sessionID] = append(in.queues[sessionID], queued{Message: m})
	}
	in.mu.Unlock()
	if err != nil {
		in.log.Error("inbox store write failed", "session", sessionID, "err", err)
		return gateway.Errorf(gateway.Unavailable, "the message could not be stored; retry with the same Idempotency-Key")
	}
	return nil
}

// TurnFinished tells the inbox a turn of the session ended (any turn: the
// person's or an inbox one); the next deliverable message starts its turn.
func (in *Inbox) TurnFinished(sessionID string) {
	in.mu.Lock()
	delete(in.inflight, sessionID)
	in.mu.Unlock()
	in.pump(sessionID)
}

// SessionReady tells the inbox a session is open (created or resumed): held
// messages for it are announced through Ask and others delivered.
func (in *Inbox) SessionReady(sessionID string) { in.pump(sessionID) }

// SessionClosed forgets a session's in-memory state (admissions, the turn in
// flight). Its stored messages stay until they expire: a closing gateway
// closes every session, and the messages must outlive that.
func (in *Inbox) SessionClosed(sessionID string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.inflight, sessionID)
	delete(in.admitted, sessionID)
	delete(in.asked, sessionID)
}

// Admit lets the held messages of the admission's source into the session
// (the person approved actionID) and delivers the first if the session is
// between turns.
func (in *Inbox) Admit(sessionID, actionID string) error {
	in.mu.Lock()
	src, ok := in.heldSource(sessionID, actionID)
	if ok {
		if in.admitted[sessionID] == nil {
			in.admitted[sessionID] = map[string]bool{}
		}
		in.admitted[sessionID][src] = true
	}
	in.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q in session %q", ErrUnknownAdmission, actionID, sessionID)
	}
	in.log.Info("inbox source admitted", "session", sessionID, "source", src)
	in.pump(sessionID)
	return nil
}

// Refuse drops the held messages of the admission's source (the person
// declined actionID).
func (in *Inbox) Refuse(sessionID, actionID string) error {
	in.mu.Lock()
	src, ok := in.heldSource(sessionID, actionID)
	var drop []queued
	if ok {
		q := in.queues[sessionID][:0:0]
		for _, m := range in.queues[sessionID] {
			if m.held && m.Source == src {
				drop = append(drop, m)
			} else {
				q = append(q, m)
			}
		}
		in.queues[sessionID] = q
	}
	in.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q in session %q", ErrUnknownAdmission, actionID, sessionID)
	}
	for _, m := range drop {
		if err := in.store.Remove(m.Seq); err != nil {
			return err
		}
	}
	in.log.Info("inbox source refused", "session", sessionID, "source", src, "dropped", len(drop))
	return nil
}

// heldSource finds the held source whose admission id is actionID. mu held.
func (in *Inbox) heldSource(sessionID, actionID string) (string, bool) {
	for _, m := range in.queues[sessionID] {
		if m.held && AdmissionID(m.Source) == actionID {
			return m.Source, true
		}
	}
	return "", false
}

// Queued returns the number of messages waiting for a session.
func (in *Inbox) Queued(sessionID string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.queues[sessionID])
}

// pump asks for admissions not yet asked and, between turns, delivers the
// oldest deliverable message.
func (in *Inbox) pump(sessionID string) {
	if _, ok := in.o.Lookup(sessionID); !ok {
		return
	}
	now := in.o.Clock.Now()
	in.mu.Lock()
	asks := in.pendingAsks(sessionID)
	if at, ok := in.inflight[sessionID]; ok && now.Sub(at) > in.cfg.TurnTimeout {
		delete(in.inflight, sessionID) // the turn ended without TurnFinished
	}
	_, busy := in.inflight[sessionID]
	var next queued
	found := false
	if !busy {
		for _, m := range in.queues[sessionID] {
			if !m.held || in.admitted[sessionID][m.Source] {
				next, found = m, true
				break
			}
		}
	}
	if found {
		in.inflight[sessionID] = now
	}
	in.mu.Unlock()

	if in.o.Ask != nil {
		for _, a := range asks {
			in.o.Ask(a)
		}
	}
	if !found {
		return
	}
	if in.o.Busy != nil && in.o.Busy(sessionID) {
		in.mu.Lock()
		delete(in.inflight, sessionID)
		in.mu.Unlock()
		return // TurnFinished of the running turn comes back here
	}
	if err := in.o.Deliver(sessionID, next.Text, next.Source); err != nil {
		in.log.Warn("inbox delivery failed", "session", sessionID, "source", next.Source, "err", err)
		in.mu.Lock()
		delete(in.inflight, sessionID)
		in.mu.Unlock()
		return
	}
	in.mu.Lock()
	q := in.queues[sessionID]
	for i, m := range q {
		if m.Seq == next.Seq {
			in.queues[sessionID] = slices.Delete(q, i, i+1)
			break
		}
	}
	if len(in.queues[sessionID]) == 0 {
		delete(in.queues, sessionID)
	}
	in.mu.Unlock()
	if err := in.store.Remove(next.Seq); err != nil {
		// Delivered but still stored: a restart holds it for admission
		// again, the at-least-once side of the trade.
		in.log.Error("inbox store remove failed", "session", sessionID, "err", err)
	}
}

// pendingAsks returns one Admission per held source not yet asked, marking
// them asked. mu held.
func (in *Inbox) pendingAsks(sessionID string) []Admission {
	var out []Admission
	idx := map[string]int{}
	for _, m := range in.queues[sessionID] {
		if !m.held || in.admitted[sessionID][m.Source] || in.asked[sessionID][m.Source] {
			continue
		}
		if i, ok := idx[m.Source]; ok {
			out[i].Count++
			continue
		}
		idx[m.Source] = len(out)
		out = append(out, Admission{SessionID: sessionID, ActionID: AdmissionID(m.Source), Source: m.Source, Name: SourceName(m.Source), Count: 1})
	}
	if len(out) > 0 && in.asked[sessionID] == nil {
		in.asked[sessionID] = map[string]bool{}
	}
	for _, a := range out {
		in.asked[sessionID][a.Source] = true
	}
	return out
}

// Expire drops messages queued longer than Config.HoldFor ago (a session
// that never came back, a source nobody admitted) and returns how many. cmd
// calls it now and then; New does it once.
func (in *Inbox) Expire() int {
	now := in.o.Clock.Now()
	var drop []queued
	in.mu.Lock()
	for id, q := range in.queues {
		kept := q[:0:0]
		for _, m := range q {
			if now.Sub(m.QueuedAt) > in.cfg.HoldFor {
				drop = append(drop, m)
			} else {
				kept = append(kept, m)
			}
		}
		if len(kept) == 0 {
			delete(in.queues, id)
		} else {
			in.queues[id] = kept
		}
	}
	in.mu.Unlock()
	for _, m := range drop {
		if err := in.store.Remove(m.Seq); err != nil {
			in.log.Error("inbox store remove failed", "session", m.SessionID, "err", err)
		}
		in.log.Info("inbox message expired", "session", m.SessionID, "source", m.Source)
	}
	return len(drop)
}
