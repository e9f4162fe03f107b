package audit

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Options are the Log's dependencies.
type Options struct {
	// Clock; nil is the wall clock.
	Clock clock.Clock
	// Logger; nil discards.
	Logger *slog.Logger
}

// Log records decisions and serves them to their partner. Safe for
// concurrent use.
type Log struct {
	cfg   Config
	store Store
	clock clock.Clock
	log   *slog.Logger
}

// New returns a Log on store.
func New(cfg Config, store Store, opts Options) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil {
		return nil, fmt.Errorf("audit: a store is required")
	}
	l := &Log{cfg: cfg, store: store, clock: clock.OrReal(opts.Clock), log: opts.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// Record appends one decision for partner; At defaults to now. It returns
// the stored record (with its ID).
func (l *Log) Record(partner string, r Record) (Record, error) {
	if r.At.IsZero() {
		r.At = l.clock.Now()
	}
	r.ID = ""
	if err := r.validate(); err != nil {
		return Record{}, err
	}
	return l.store.Append(partner, r, l.clock.Now().Add(-l.cfg.retention()), l.cfg.MaxRecordsPerPartner)
}

// List returns partner's records matching q (Limit defaults to
// DefaultPageLimit and is capped at MaxPageLimit).
func (l *Log) List(partner string, q Query) ([]Record, bool, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultPageLimit
	}
	q.Limit = min(q.Limit, MaxPageLimit)
	return l.store.List(partner, q)
}

// Prune drops records past the retention period, for every partner.
func (l *Log) Prune() error {
	n, err := l.store.Prune(l.clock.Now().Add(-l.cfg.retention()))
	if n > 0 {
		l.log.Info("audit records past retention dropped", "records", n)
	}
	return err
}

// Route is GET /v1/audit/decisions (scope audit:read).
func (l *Log) Route() gateway.Route {
	return gateway.Route{Method: http.MethodGet, Path: "/v1/audit/decisions", Scope: gateway.ScopeAuditRead,
		Handler: http.HandlerFunc(l.handleList)}
}

// Page is the body of GET /v1/audit/decisions.
type Page struct {
	Data    []Record `json:"data"`
	HasMore bool     `json:"has_more"`
	// NextAfter is the cursor of the next page (the last record's id);
	// empty when the page is empty.
	NextAfter string `json:"next_after,omitempty"`
}

func (l *Log) handleList(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	v := r.URL.Query()
	q := Query{SessionID: v.Get("session_id"), ActionID: v.Get("action_id")}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageLimit {
			gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "limit: must be an integer in [1, %d]", MaxPageLimit))
			return
		}
		q.Limit = n
	}
	if s := v.Get("after"); s != "" {
		n, err := ParseID(s)
		if err != nil {
			gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "after: must be a record id from an earlier page"))
			return
		}
		q.After = n
	}
	recs, more, err := l.List(p.PartnerID, q)
	if err != nil {
		l.log.Error("audit list failed", "err", err)
		gateway.WriteError(w, r, fmt.Errorf("audit: %w", err))
		return
	}
	page := Page{Data: recs, HasMore: more}
	if page.Data == nil {
		page.Data = []Record{}
	}
	if n := len(recs); n > 0 {
		page.NextAfter = recs[n-1].ID
	}
	gateway.WriteJSON(w, http.StatusOK, page)
}
