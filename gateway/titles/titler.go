package titles

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
)

const (
	// Prompt is the naming instruction sent to the snappy slot.
	Prompt    = "Name this conversation in five words or fewer."
	maxTokens = 32
	maxWords  = 5
	// callTimeout bounds one naming call: a title is cosmetic, so a slow
	// model is given up on rather than waited for.
	callTimeout = 20 * time.Second
	// maxCalls bounds naming calls in flight; past it a session goes
	// unnamed rather than queue work behind a slow model.
	maxCalls = 8
)

// Session is what naming needs of a session (*session.Session).
type Session interface {
	ID() string
	SetTitle(title string) session.TitleOutcome
}

// Options are the Titler's optional collaborators.
type Options struct {
	// Registerer receives vera_sessions_titles_total; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger; nil discards.
	Logger *slog.Logger
}

// Titler names sessions off the turn path: a slow or failing model never
// delays a session.
type Titler struct {
	oneshot  router.Oneshotter
	log      *slog.Logger
	outcomes *prometheus.CounterVec

	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
}

// New returns a Titler asking o (the router) for names.
func New(o router.Oneshotter, opts Options) (*Titler, error) {
	t := &Titler{oneshot: o, log: opts.Logger, slots: make(chan struct{}, maxCalls),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "sessions",
			Name: "titles_total", Help: "Automatic session titles by outcome: set, named (the person's name won), not_found, failed, skipped (too many in flight)."},
			[]string{"outcome"})}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(t.outcomes); err != nil {
			return nil, fmt.Errorf("titles: metrics: %w", err)
		}
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// Name asks the snappy slot to name s from the person's first message,
// without blocking: when eight calls are in flight (or the Titler is
// closed) s stays unnamed.
func (t *Titler) Name(s Session, prompt string) {
	if t.ctx.Err() != nil {
		return
	}
	select {
	case t.slots <- struct{}{}:
	default:
		t.outcomes.WithLabelValues("skipped").Inc()
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() { <-t.slots }()
		t.run(s, prompt)
	}()
}

func (t *Titler) run(s Session, prompt string) {
	ctx, cancel := context.WithTimeout(t.ctx, callTimeout)
	defer cancel()
	out, err := t.oneshot.Oneshot(ctx, router.OneshotRequest{Assignment: router.SlotSnappy, SystemPrompt: Prompt,
		Messages: []router.Message{{Role: router.RoleUser, Text: prompt}}, MaxTokens: maxTokens,
		IdempotencyKey: "title-" + s.ID()})
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("session not named", "session", s.ID(), "err", err)
			t.outcomes.WithLabelValues("failed").Inc()
		}
		return
	}
	title := FromAnswer(out.Text)
	if title == "" {
		t.log.Warn("session not named: the model's title was empty", "session", s.ID(), "model", out.Model)
		t.outcomes.WithLabelValues("failed").Inc()
		return
	}
	t.outcomes.WithLabelValues(string(s.SetTitle(title))).Inc()
}

// Close cancels naming calls in flight and waits for them; later Name
// calls do nothing. A nil Titler is closed.
func (t *Titler) Close() {
	if t == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
}

// FromAnswer makes a model's answer a title: its first non-empty line,
// without a "Title:" label, quotes, markdown marks or end punctuation,
// whitespace runs as one space, at most five words. The session then
// normalises it as every title (session.NormalizeTitle).
func FromAnswer(s string) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	line = strings.TrimSpace(line)
	if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.Trim(strings.TrimSpace(k), "*#_ "), "title") {
		line = v
	}
	words := strings.Fields(line)
	if len(words) > maxWords {
		words = words[:maxWords]
	}
	trim := func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`*#_“”‘’«»", r)
	}
	for i, w := range words {
		words[i] = strings.TrimFunc(w, trim)
	}
	out := strings.Join(strings.Fields(strings.Join(words, " ")), " ")
	return strings.TrimRightFunc(out, func(r rune) bool { return unicode.IsPunct(r) && r != ')' && r != '?' || trim(r) })
}
