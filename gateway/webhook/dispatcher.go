package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
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
	// Dev allows loopback receivers (dev mode serves loopback only);
	// other internal addresses still need Config.AllowPrivateTargets.
	Dev    bool
	Clock  clock.Clock
	Logger *slog.Logger
	// Resolver resolves endpoint hosts; nil is the system's. Every address
	// it returns is checked at the dial (see ValidateTargets).
	Resolver *net.Resolver
	// NewBackOff returns the retry schedule; nil is Schedule (1 s, 10 s,
	// 60 s).
	NewBackOff func() backoff.BackOff
	// Registerer receives vera_webhook_attempts_total; nil registers
	// nothing.
	Registerer prometheus.Registerer
}

// Dispatcher queues events durably and delivers them: one queue and one
// sender goroutine per partner endpoint.
type Dispatcher struct {
	cfg   Config
	store Store
	// shared is store when several nodes share it: it schedules, and
	// leases decide which node sends to each endpoint.
	shared SharedStore
	clock  clock.Clock
	log    *slog.Logger
	client *http.Client
	newBO  func() backoff.BackOff
	met    *metrics
	// queues and byPartner are fixed at start.
	queues    map[queueKey]*queue
	byPartner map[string][]*queue

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex // mu guards closed
	closed bool
}

// NewDispatcher validates cfg and every endpoint's target, and starts one
// sender per endpoint, which resumes the deliveries already in store.
func NewDispatcher(cfg Config, store Store, opts Options) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	if store == nil {
		return nil, errors.New("webhook: a store is required")
	}
	d := &Dispatcher{cfg: cfg, store: store, clock: opts.Clock, log: opts.Logger, newBO: opts.NewBackOff,
		queues: map[queueKey]*queue{}, byPartner: map[string][]*queue{}}
	d.shared, _ = store.(SharedStore)
	for p, list := range opts.Endpoints {
		if err := ValidateTargets(fmt.Sprintf("partner %q webhooks", p), list, cfg, opts.Dev); err != nil {
			return nil, fmt.Errorf("webhook: %w", err)
		}
		for _, e := range list {
			if e.Secret == "" {
				return nil, fmt.Errorf("webhook: partner %q endpoint %q: %w", p, e.URL, ErrNoSecret)
			}
			q := newQueue(queueKey{p, e.URL}, e)
			d.queues[q.key] = q
			d.byPartner[p] = append(d.byPartner[p], q)
		}
	}
	if d.clock == nil {
		d.clock = clock.Real{}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.newBO == nil {
		d.newBO = func() backoff.BackOff { return &Schedule{} }
	}
	d.client = newClient(cfg, targetPolicy{allowPrivate: cfg.AllowPrivateTargets, allowLoopback: opts.Dev}, opts.Resolver)
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("webhook: metrics: %w", err)
	}
	d.met = met
	if err := d.resume(); err != nil {
		return nil, err
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	for _, q := range d.queues {
		d.wg.Go(func() { d.work(q) })
	}
	return d, nil
}

// newClient is the delivery client: an own transport (Close drops its idle
// connections without touching anyone else's), no proxy, every dialled
// address checked against p, redirects not followed.
func newClient(cfg Config, p targetPolicy, r *net.Resolver) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = p.newDialer(r).DialContext
	tr.MaxIdleConnsPerHost = 2
	return &http.Client{Timeout: cfg.Timeout, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// resume loads the pending deliveries into their queues; those of an
// endpoint no longer configured are recorded as failed. A shared store
// schedules them itself (and another node may still serve an endpoint
// this one no longer has).
func (d *Dispatcher) resume() error {
	if d.shared != nil {
		return nil
	}
	now := d.clock.Now()
	var orphans []Delivery
	err := d.store.Each(func(dl Delivery) error {
		q := d.queues[queueKey{dl.Partner, dl.URL}]
		if q == nil {
			orphans = append(orphans, dl)
			return nil
		}
		q.push(item{seq: dl.Seq, at: dl.NextAt}, now)
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhook: resume: %w", err)
	}
	for _, dl := range orphans {
		dl.LastError = "endpoint is no longer configured"
		d.fail(dl)
	}
	return nil
}

// Publish stores one delivery of ev for each of partner's endpoints that
// subscribe to its type, each in its endpoint's queue, and returns how many
// it stored; a stored event is durable when Publish returns. An endpoint
// whose queue holds Config.MaxPending deliveries refuses the event
// (ErrQueueFull, naming the endpoint's host) without affecting the others.
// A partner without endpoints gets none (0, nil).
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
	n := 0
	var errs []error
	for _, q := range d.byPartner[partner] {
		if !q.ep.Wants(ev.Type) {
			continue
		}
		ds := []Delivery{{EventID: ev.ID, EventType: ev.Type, Partner: partner, URL: q.ep.URL,
			Body: body, CreatedAt: now, NextAt: now}}
		if err := d.store.Add(ds, d.cfg.MaxPending); err != nil {
			errs = append(errs, fmt.Errorf("webhook: queue %s for %s: %w", ev.Type, hostOf(q.ep.URL), err))
			continue
		}
		d.schedule(q, item{seq: ds[0].Seq, at: now}, now)
		n++
	}
	return n, errors.Join(errs...)
}

// hostOf names an endpoint in errors and logs without its path, which may
// carry a receiver's token.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return "endpoint"
}

// Close stops the senders and joins them. Deliveries in flight are
// cancelled and stay pending in the store for the next start.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		d.client.CloseIdleConnections()
		return d.release()
	case <-ctx.Done():
		return fmt.Errorf("webhook: close: %w", ctx.Err())
	}
}

// release gives up this node's endpoint leases in a shared store, so
// another node sends what was pending here at once (drain).
func (d *Dispatcher) release() error {
	if d.shared == nil {
		return nil
	}
	var errs []error
	for k := range d.queues {
		errs = append(errs, d.shared.Release(k.partner, k.url))
	}
	return errors.Join(errs...)
}

// storeRetry is the wait after a store error before a sender tries again.
const storeRetry = time.Second

// schedule queues it in q, or with a shared store (which scheduled it
// already) only wakes q's sender.
func (d *Dispatcher) schedule(q *queue, it item, now time.Time) {
	if d.shared == nil {
		q.push(it, now)
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next is q's oldest due delivery; otherwise how long until one is due
// (0: wait for a wake). A shared store answers only to the node holding
// the endpoint's lease.
func (d *Dispatcher) next(q *queue) (item, bool, time.Duration) {
	now := d.clock.Now()
	if d.shared == nil {
		return q.next(now)
	}
	seq, ok, wait, err := d.shared.Next(q.key.partner, q.key.url, now)
	if err != nil {
		d.log.Error("webhook store read failed", "err", err)
		return item{}, false, storeRetry
	}
	return item{seq: seq, at: now}, ok, wait
}

// work is one endpoint's sender: one attempt at a time, the oldest due
// delivery first.
func (d *Dispatcher) work(q *queue) {
	for {
		it, ok, wait := d.next(q)
		if ok {
			d.attempt(q, it)
			if d.ctx.Err() != nil {
				return
			}
			continue
		}
		var (
			timer clock.Timer
			fire  <-chan time.Time
		)
		if wait > 0 {
			timer, fire = d.clock.NewTimer(wait)
		}
		select {
		case <-d.ctx.Done():
		case <-q.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if d.ctx.Err() != nil {
			return
		}
	}
}

// attempt sends one delivery and records the outcome.
func (d *Dispatcher) attempt(q *queue, it item) {
	dl, ok, err := d.store.Get(it.seq)
	if err != nil {
		d.log.Error("webhook store read failed", "err", err)
		d.schedule(q, item{seq: it.seq, at: d.clock.Now().Add(storeRetry)}, d.clock.Now())
		return
	}
	if !ok {
		return // already gone
	}
	err = d.send(d.ctx, dl, q.ep.Secret)
	if err == nil {
		if err := d.store.Done(dl.Seq); err != nil {
			d.log.Error("webhook store write failed", "err", err)
		}
		d.met.inc("delivered")
		d.log.Debug("webhook delivered", "event", dl.EventID, "type", dl.EventType, "partner", dl.Partner, "attempt", dl.Attempts+1)
		return
	}
	if d.ctx.Err() != nil {
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
	d.schedule(q, item{seq: dl.Seq, at: dl.NextAt}, d.clock.Now())
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
