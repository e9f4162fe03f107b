package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Options are the dispatcher's collaborators.
type Options struct {
	// Endpoints by partner id, with secrets resolved. Dev mode's top-level
	// webhooks belong to gateway.DevPartnerID ("dev").
	Endpoints map[string][]Endpoint
	Clock     clock.Clock
	Logger    *slog.Logger
	// Client sends the requests; nil gets one with Config.Timeout that
	// follows no redirects.
	Client *http.Client
	// NewBackOff returns the retry schedule; nil is Schedule (1 s, 10 s,
	// 60 s).
	NewBackOff func() backoff.BackOff
	// Registerer receives vera_webhook_attempts_total; nil registers
	// nothing.
	Registerer prometheus.Registerer
}

// Dispatcher queues events durably and delivers them in its own goroutine.
type Dispatcher struct {
	cfg    Config
	store  Store
	eps    map[string][]Endpoint
	clock  clock.Clock
	log    *slog.Logger
	client *http.Client
	newBO  func() backoff.BackOff
	met    *metrics

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // mu guards closed
	closed bool
}

// NewDispatcher validates cfg and starts the delivery goroutine, which
// resumes any deliveries already in store.
func NewDispatcher(cfg Config, store Store, opts Options) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	if store == nil {
		return nil, errors.New("webhook: a store is required")
	}
	eps := map[string][]Endpoint{}
	for p, list := range opts.Endpoints {
		for _, e := range list {
			if e.Secret == "" {
				return nil, fmt.Errorf("webhook: partner %q endpoint %q: %w", p, e.URL, ErrNoSecret)
			}
		}
		eps[p] = append([]Endpoint(nil), list...)
	}
	d := &Dispatcher{cfg: cfg, store: store, eps: eps, clock: opts.Clock, log: opts.Logger, client: opts.Client,
		newBO: opts.NewBackOff, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if d.clock == nil {
		d.clock = clock.Real{}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.client == nil {
		// An own transport: Close may drop its idle connections without
		// touching anyone else's.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = cfg.Concurrency
		d.client = &http.Client{Timeout: cfg.Timeout, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if d.newBO == nil {
		d.newBO = func() backoff.BackOff { return &Schedule{} }
	}
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("webhook: metrics: %w", err)
	}
	d.met = met
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go d.run(ctx)
	return d, nil
}

// Publish stores one delivery of ev for each of partner's endpoints that
// subscribe to its type and returns how many; the event is durable when
// Publish returns nil. A partner without endpoints gets none (0, nil).
func (d *Dispatcher) Publish(partner string, ev Event) (int, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	if ev.ID == "" {
		ev.ID = NewEventID()
	}
	if ev.Created == 0 {
		ev.Created = d.clock.Now().Unix()
	}
	if !slices.Contains(EventTypes, ev.Type) {
		return 0, fmt.Errorf("webhook: %w: %q", ErrUnknownEvent, ev.Type)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return 0, fmt.Errorf("webhook: encode %s: %w", ev.Type, err)
	}
	now := d.clock.Now()
	var ds []Delivery
	for _, e := range d.eps[partner] {
		if e.Wants(ev.Type) {
			ds = append(ds, Delivery{EventID: ev.ID, EventType: ev.Type, Partner: partner, URL: e.URL,
				Body: body, CreatedAt: now, NextAt: now})
		}
	}
	if len(ds) == 0 {
		return 0, nil
	}
	if err := d.store.Add(ds, d.cfg.MaxPending); err != nil {
		return 0, fmt.Errorf("webhook: queue %s: %w", ev.Type, err)
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return len(ds), nil
}

// Close stops the dispatcher and joins its goroutines. Deliveries in flight
// are cancelled and stay pending in the store for the next start.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	select {
	case <-d.done:
		d.client.CloseIdleConnections()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("webhook: close: %w", ctx.Err())
	}
}

// storeRetry is the wait after a store error before the loop tries again.
const storeRetry = time.Second

func (d *Dispatcher) run(ctx context.Context) {
	defer close(d.done)
	for {
		now := d.clock.Now()
		due, next, err := d.store.Due(now, d.cfg.Concurrency)
		if err != nil {
			d.log.Error("webhook store read failed", "err", err)
			next = now.Add(storeRetry)
		}
		if len(due) > 0 {
			d.sendAll(ctx, due)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		var (
			timer clock.Timer
			fire  <-chan time.Time
		)
		if !next.IsZero() {
			timer, fire = d.clock.NewTimer(next.Sub(now))
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (d *Dispatcher) sendAll(ctx context.Context, due []Delivery) {
	var wg sync.WaitGroup
	for _, dl := range due {
		wg.Go(func() { d.attempt(ctx, dl) })
	}
	wg.Wait()
}

func (d *Dispatcher) secret(partner, url string) (string, bool) {
	for _, e := range d.eps[partner] {
		if e.URL == url {
			return e.Secret, true
		}
	}
	return "", false
}

// attempt sends one delivery and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, dl Delivery) {
	secret, ok := d.secret(dl.Partner, dl.URL)
	if !ok {
		dl.LastError = "endpoint is no longer configured"
		d.fail(dl)
		return
	}
	err := d.send(ctx, dl, secret)
	if err == nil {
		if err := d.store.Done(dl.Seq); err != nil {
			d.log.Error("webhook store write failed", "err", err)
		}
		d.met.inc("delivered")
		d.log.Debug("webhook delivered", "event", dl.EventID, "type", dl.EventType, "partner", dl.Partner, "attempt", dl.Attempts+1)
		return
	}
	if ctx.Err() != nil {
		return // shutting down: not the receiver's failure; sent again on the next start
	}
	dl.Attempts++
	dl.LastError = err.Error()
	wait := afterAttempts(d.newBO(), dl.Attempts)
	if wait == backoff.Stop {
		d.fail(dl)
		return
	}
	dl.NextAt = d.clock.Now().Add(wait)
	d.met.inc("retry")
	d.log.Warn("webhook attempt failed", "event", dl.EventID, "partner", dl.Partner, "attempt", dl.Attempts, "retry_in", wait, "err", err)
	if err := d.store.Reschedule(dl); err != nil {
		d.log.Error("webhook store write failed", "err", err)
	}
}

func (d *Dispatcher) fail(dl Delivery) {
	dl.FailedAt = d.clock.Now()
	d.met.inc("failed")
	d.log.Error("webhook delivery failed", "event", dl.EventID, "type", dl.EventType, "partner", dl.Partner, "attempts", dl.Attempts, "err", dl.LastError)
	if err := d.store.Fail(dl, d.cfg.KeepFailed); err != nil {
		d.log.Error("webhook store write failed", "err", err)
	}
}

// maxDrain bounds how much of a receiver's answer is read (to reuse the
// connection).
const maxDrain = 64 << 10

func (d *Dispatcher) send(ctx context.Context, dl Delivery, secret string) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Body))
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "vera-gateway-webhook/1")
	h.Set(HeaderEventID, dl.EventID)
	h.Set(HeaderEventType, dl.EventType)
	h.Set(HeaderSignature, Sign(secret, d.clock.Now(), dl.Body))
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New("receiver answered " + strconv.Itoa(resp.StatusCode))
	}
	return nil
}
