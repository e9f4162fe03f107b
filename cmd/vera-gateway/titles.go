package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/router"
)

// Session titles: the extension API's vera.titles, built in. After a
// session's first turn that the person started, the snappy slot names it
// in five words or fewer; a name the person set or cleared always wins
// (the session decides: SetTitle answers set, named or not_found).
const (
	titlePrompt    = "Name this conversation in five words or fewer."
	titleMaxTokens = 32
	titleMaxWords  = 5
	// titleTimeout bounds one naming call: a title is cosmetic, so a slow
	// model is given up on rather than waited for.
	titleTimeout = 20 * time.Second
	// maxTitleCalls bounds naming calls in flight; past it a session goes
	// unnamed rather than queue work behind a slow model.
	maxTitleCalls = 8
	// maxTitleRunes bounds a title a partner sets.
	maxTitleRunes = 200
)

// Title outcomes (the extension API's setTitle).
const (
	titleSet      = "set"
	titleNamed    = "named"
	titleNotFound = "not_found"
)

// titler names sessions off the turn path: each naming call runs in its
// own goroutine, owned here (bounded by maxTitleCalls, cancelled and
// joined by close), so a slow or failing model never delays a session.
type titler struct {
	oneshot func(context.Context, router.OneshotRequest) (router.OneshotResponse, error)
	// set applies a title with setTitle's semantics and returns the
	// outcome (set, named, not_found).
	set      func(sessionID, title string) string
	log      *slog.Logger
	outcomes *prometheus.CounterVec

	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
}

func newTitler(oneshot func(context.Context, router.OneshotRequest) (router.OneshotResponse, error),
	set func(sessionID, title string) string, log *slog.Logger) *titler {
	ctx, cancel := context.WithCancel(context.Background())
	return &titler{oneshot: oneshot, set: set, log: log, ctx: ctx, cancel: cancel, slots: make(chan struct{}, maxTitleCalls),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "sessions",
			Name: "titles_total", Help: "Automatic session titles by outcome: set, named (the person's name won), not_found, failed, skipped (too many in flight)."},
			[]string{"outcome"})}
}

// name asks the snappy slot to name session sessionID from the person's
// first message, without blocking: when maxTitleCalls are in flight (or
// the titler is closed) the session stays unnamed.
func (t *titler) name(sessionID, prompt string) {
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
		t.run(sessionID, prompt)
	}()
}

func (t *titler) run(sessionID, prompt string) {
	ctx, cancel := context.WithTimeout(t.ctx, titleTimeout)
	defer cancel()
	out, err := t.oneshot(ctx, router.OneshotRequest{Assignment: router.SlotSnappy, SystemPrompt: titlePrompt,
		Messages: []router.Message{{Role: router.RoleUser, Text: prompt}}, MaxTokens: titleMaxTokens,
		IdempotencyKey: "title-" + sessionID})
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("session not named", "session", sessionID, "err", err)
			t.outcomes.WithLabelValues("failed").Inc()
		}
		return
	}
	title := normalizeTitle(out.Text, titleMaxWords)
	if title == "" {
		t.log.Warn("session not named: the model's title was empty", "session", sessionID, "model", out.Model)
		t.outcomes.WithLabelValues("failed").Inc()
		return
	}
	t.outcomes.WithLabelValues(t.set(sessionID, title)).Inc()
}

// close cancels naming calls in flight and waits for them.
func (t *titler) close() {
	t.cancel()
	t.wg.Wait()
}

// normalizeTitle makes a model's answer a title: its first non-empty
// line, without a "Title:" label, quotes, markdown marks or end
// punctuation, whitespace runs as one space, at most maxWords words.
func normalizeTitle(s string, maxWords int) string {
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

// cleanTitle is setTitle's own normalisation of a title a partner sends:
// trimmed, whitespace runs (line breaks included) as one space.
func cleanTitle(s string) string { return strings.Join(strings.Fields(s), " ") }

type titleBody struct {
	Title *string `json:"title"`
}

// handleTitle is PUT /v1/sessions/{id}/title (scope conversations:write):
// setTitle for partners. 200 {"outcome":"set"} names a session that never
// had a name; {"outcome":"named"} leaves a name the person set or cleared
// (or an earlier one) in place. An unknown session and another partner's
// are the same 404.
func (x *extensions) handleTitle(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	id := mux.Vars(r)["id"]
	var b titleBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if b.Title == nil {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: required"))
		return
	}
	title := cleanTitle(*b.Title)
	switch {
	case title == "":
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: must not be blank"))
		return
	case utf8.RuneCountInString(title) > maxTitleRunes:
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: at most %d characters", maxTitleRunes))
		return
	}
	notFound := func() {
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no open session %q", id))
	}
	s, ok := x.sessions().Get(id)
	if !ok || s.Owner().PartnerID != p.PartnerID || x.setTitle == nil {
		notFound()
		return
	}
	outcome := x.setTitle(id, title)
	if outcome == titleNotFound {
		notFound()
		return
	}
	gateway.WriteJSON(w, http.StatusOK, map[string]string{"outcome": outcome})
}
