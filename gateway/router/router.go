package router

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/safety"
)

// Default budgets of a model whose ttft_ms / timeout_ms are 0.
const (
	DefaultTTFT    = 2 * time.Second
	DefaultTimeout = 30 * time.Second
)

// Assessor is the local safety detector the companion consults: the user's
// earlier texts of the conversation and the new one in, an assessment out.
type Assessor func(history []string, text string) safety.Assessment

// Options are the dependencies cmd/ injects.
type Options struct {
	// Registerer receives the metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Logger; nil discards.
	Logger *slog.Logger
	// Clock; nil is the wall clock.
	Clock clock.Clock
	// HTTPClient for the HTTP providers; nil uses a dedicated client with
	// no overall timeout (deadlines are per attempt).
	HTTPClient *http.Client
	// Assess is the companion's safety source; nil yields level none.
	Assess Assessor
	// FallbackResources gives the local resources for a card the router
	// must fill itself: an engine safety object that cannot be read counts
	// as elevated, and a required card is never empty. cmd/ passes the
	// deployment's catalog and default region; nil uses the embedded
	// catalog with no region (the international directory and "call your
	// local emergency number"). It must never return an empty list.
	FallbackResources func(level safety.Level) []safety.Resource
}

// defaultFallbackResources is FallbackResources when cmd/ gives none.
func defaultFallbackResources(level safety.Level) []safety.Resource {
	return safety.ResourcesFor(level, nil, safety.RegionPrefs{})
}

// Router sends requests for a slot to its models in order. Safe for
// concurrent use. Close it to free the embedded decoders.
type Router struct {
	cfg     Config
	log     *slog.Logger
	clock   clock.Clock
	metrics *metrics
	models  map[string]*model
	slots   map[string][]*model
	// classifiers is the safety slot (fan-out, not failover); empty when
	// none is configured.
	classifiers []*model
	closers     []func() error
	// spot is the crisis key-phrase spotter run beside every listen (nil
	// when router.sphinx.spot.enabled is false or pocketsphinx is not built).
	spot *spotter

	closeOnce sync.Once
}

// model is one configured model with its provider and breaker.
type model struct {
	cfg     ModelConfig
	ttft    time.Duration
	timeout time.Duration
	text    textProvider   // nil when the provider has no text capability
	listen  listenProvider // nil when it cannot listen
	speak   speakProvider  // nil when it cannot speak
	// classify is set for safety-slot providers (and only for them).
	classify classifyProvider
	breaker  *breaker
}

// New builds a router. Slots the configuration leaves out are filled by the
// embedded engines. getenv (os.Getenv in cmd/) is read once here for every
// models[].api_key_env; a missing credential is an error naming it.
func New(cfg Config, getenv func(string) string, opts Options) (*Router, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("router: config: %w", err)
	}
	cfg = cfg.withEmbedded()
	r := &Router{
		cfg:    cfg,
		log:    opts.Logger,
		clock:  opts.Clock,
		models: map[string]*model{},
		slots:  map[string][]*model{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.clock == nil {
		r.clock = clock.Real{}
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		// The router's own connections to remote models end with it.
		r.closers = append(r.closers, func() error { client.CloseIdleConnections(); return nil })
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	r.metrics = m
	fill := opts.FallbackResources
	if fill == nil {
		fill = defaultFallbackResources
	}
	env := &providerEnv{client: client, clock: r.clock, maxBody: cfg.MaxBodyBytes, assess: opts.Assess, log: r.log,
		fallbackResources: func(l safety.Level) []safety.Resource {
			if rs := fill(l); len(rs) > 0 {
				return rs
			}
			return defaultFallbackResources(l) // never an empty card, whatever cmd/ passed
		},
		replyDefect: func(model, defect string) {
			r.metrics.defects.WithLabelValues(model, defect).Inc()
			r.log.Warn("router: engine reply defect read around", "model", model, "defect", defect)
		}}
	for i, mc := range cfg.Models {
		key := ""
		if mc.APIKeyEnv != "" {
			if getenv == nil {
				r.Close()
				return nil, fmt.Errorf("router.models[%d].api_key_env: %s: no environment given to router.New", i, mc.APIKeyEnv)
			}
			if key = getenv(mc.APIKeyEnv); key == "" {
				r.Close()
				return nil, fmt.Errorf("router.models[%d].api_key_env: environment variable %s (model %q) is not set", i, mc.APIKeyEnv, mc.Name)
			}
		}
		md := &model{cfg: mc, ttft: ms(mc.TTFTMs, DefaultTTFT), timeout: ms(mc.TimeoutMs, DefaultTimeout)}
		if mc.Provider == ProviderModeration || mc.Provider == ProviderGuard {
			md.timeout = ms(mc.TimeoutMs, DefaultClassifyTimeout)
		}
		if err := r.attachProvider(md, key, env); err != nil {
			r.Close()
			return nil, fmt.Errorf("router.models[%d] (%s): %w", i, mc.Name, err)
		}
		labels := prometheus.Labels{"model": mc.Name, "provider": mc.Provider}
		gauge := r.metrics.breaker.With(labels)
		md.breaker = newBreaker(cfg.Breaker.Failures, time.Duration(cfg.Breaker.CooldownMs)*time.Millisecond,
			func(s BreakerState) { gauge.Set(float64(s)) })
		r.models[mc.Name] = md
	}
	for slot, names := range cfg.Slots {
		for _, n := range names {
			r.slots[slot] = append(r.slots[slot], r.models[n])
		}
	}
	r.classifiers = r.slots[SlotSafety]
	if cfg.Sphinx.Spot.Enabled && sphinxBuilt && len(r.slots[SlotListen]) > 0 {
		sp, closer, err := newSpotter(cfg.Sphinx)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("router.sphinx.spot: %w", err)
		}
		r.spot = sp
		r.closers = append(r.closers, closer)
	}
	return r, nil
}

func ms(v int, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return time.Duration(v) * time.Millisecond
}

func (r *Router) attachProvider(md *model, key string, env *providerEnv) error {
	switch md.cfg.Provider {
	case ProviderOpenAI:
		p := newOpenAI(md.cfg, key, env)
		md.text, md.listen, md.speak = p, p, p
	case ProviderVERA:
		md.text = newVERA(md.cfg, key, env)
	case ProviderModeration:
		md.classify = newModeration(md.cfg, key, env)
	case ProviderGuard:
		md.classify = newGuard(md.cfg, key, env)
	case ProviderCompanion:
		md.text = newCompanion(env.assess)
	case ProviderEspeak:
		p, err := newEspeakProvider(r.cfg.Espeak)
		if err != nil {
			return err
		}
		md.speak = p
	case ProviderPocketsphinx:
		p, closer, err := newSphinxProvider(r.cfg.Sphinx)
		if err != nil {
			return err
		}
		md.listen = p
		r.closers = append(r.closers, closer)
	default:
		return fmt.Errorf("unknown provider %q", md.cfg.Provider)
	}
	return nil
}

// Close frees the embedded engines. Calls in flight should be cancelled
// first; Close does not wait for them.
func (r *Router) Close() error {
	var errs []error
	r.closeOnce.Do(func() {
		for _, c := range r.closers {
			errs = append(errs, c())
		}
	})
	return errors.Join(errs...)
}

// Slots returns the resolved slots: slot name → ordered model names.
func (r *Router) Slots() map[string][]string {
	out := make(map[string][]string, len(r.slots))
	for s, ms := range r.slots {
		for _, m := range ms {
			out[s] = append(out[s], m.cfg.Name)
		}
	}
	return out
}

// BreakerState reports a model's breaker state (closed for unknown models).
func (r *Router) BreakerState(model string) BreakerState {
	if m, ok := r.models[model]; ok {
		return m.breaker.snapshot()
	}
	return BreakerClosed
}

// call is one attempt's view for a provider: its idempotency key and the
// hook that marks the first useful token.
type call struct {
	key   string
	first func() bool // marks the first useful token; false once abandoned
}

// errAbandoned is what a provider sees when it reports output after the
// router gave up on the attempt (TTFT passed).
var errAbandoned = errors.New("router: attempt abandoned")

// Causes set on an attempt's context by the router's own deadlines.
var (
	errTTFT    = errors.New("no useful token within the ttft budget")
	errTimeout = errors.New("model timeout reached")
)

// plan is how run treats one request.
type plan struct {
	slot string
	// tokens is what the request needs of model m's context window; nil
	// when windows do not apply (audio).
	tokens func(m *model) int
	// streamed: output reaches the caller during the attempt, so a failure
	// after the first useful token cannot move to another model.
	streamed bool
	key      string // caller's idempotency key, or ""
	models   []*model
}

// run tries the plan's models in order and returns the one that answered.
// try performs one attempt; it must honour ctx and call c.first() when the
// first useful output is ready (before handing it to the caller).
func (r *Router) run(ctx context.Context, p plan, try func(ctx context.Context, m *model, c *call) error) (*model, error) {
	var attempts []Attempt
	for _, m := range p.models {
		labels := prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider}
		if p.tokens != nil && m.cfg.ContextWindow > 0 {
			if need := p.tokens(m); need > m.cfg.ContextWindow {
				attempts = append(attempts, Attempt{Model: m.cfg.Name, Provider: m.cfg.Provider, Kind: KindContextWindow,
					Err: fmt.Errorf("request needs about %d tokens, context_window is %d", need, m.cfg.ContextWindow)})
				r.metrics.skips.With(prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider, "reason": string(KindContextWindow)}).Inc()
				continue
			}
		}
		key := p.key
		if key == "" {
			key = newKey()
		}
		key += "-" + m.cfg.Name
		bo := backoff.NewExponentialBackOff()
		bo.InitialInterval = time.Duration(r.cfg.Retry.InitialMs) * time.Millisecond
		bo.MaxInterval = time.Duration(r.cfg.Retry.MaxIntervalMs) * time.Millisecond
		bo.Multiplier = r.cfg.Retry.Multiplier
		bo.RandomizationFactor = r.cfg.Retry.Jitter
		bo.MaxElapsedTime = 0 // bounded by max_retries and timeout_ms instead
		bo.Clock = r.clock
		bo.Reset()
		deadline := r.clock.Now().Add(m.timeout)
		for retry := 0; ; retry++ {
			now := r.clock.Now()
			if !m.breaker.allow(now) {
				attempts = append(attempts, Attempt{Model: m.cfg.Name, Provider: m.cfg.Provider, Kind: KindBreakerOpen,
					Err: errors.New("circuit breaker open"), Retry: retry})
				r.metrics.skips.With(prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider, "reason": string(KindBreakerOpen)}).Inc()
				break
			}
			r.metrics.attempts.With(prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider, "slot": p.slot}).Inc()
			err, started := r.attempt(ctx, m, key, deadline, try)
			dur := r.clock.Now().Sub(now)
			r.metrics.duration.With(labels).Observe(dur.Seconds())
			if err == nil {
				ok := true
				m.breaker.record(r.clock.Now(), &ok)
				return m, nil
			}
			kind, pe := classify(ctx, err)
			if started && p.streamed && kind != KindCanceled && kind != KindAborted {
				kind = KindTruncated
			}
			if kind.countsAgainstBreaker() {
				ok := false
				m.breaker.record(r.clock.Now(), &ok)
			} else {
				m.breaker.record(r.clock.Now(), nil)
			}
			r.metrics.failures.With(prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider, "kind": string(kind)}).Inc()
			attempts = append(attempts, Attempt{Model: m.cfg.Name, Provider: m.cfg.Provider, Kind: kind, Err: err, Duration: dur, Retry: retry})
			r.log.Debug("router attempt failed", "slot", p.slot, "model", m.cfg.Name, "kind", string(kind), "retry", retry)
			if kind == KindCanceled {
				return nil, fmt.Errorf("router: slot %q: %w", p.slot, context.Cause(ctx))
			}
			if kind == KindAborted {
				var ce *callbackError
				errors.As(err, &ce)
				return nil, fmt.Errorf("router: slot %q: aborted by caller: %w", p.slot, ce.err)
			}
			if kind == KindTruncated {
				return nil, &NoModelError{Slot: p.slot, Attempts: attempts}
			}
			if !kind.retryable() || retry >= r.cfg.Retry.MaxRetries {
				break
			}
			wait := bo.NextBackOff()
			if pe != nil && pe.RetryAfter > 0 {
				if pe.RetryAfter > time.Duration(r.cfg.Retry.MaxRetryAfterMs)*time.Millisecond {
					break // waiting that long is dead air: next model
				}
				wait = max(wait, pe.RetryAfter)
			}
			if wait == backoff.Stop || r.clock.Now().Add(wait).After(deadline) {
				break
			}
			if err := clock.Sleep(ctx, r.clock, wait); err != nil {
				return nil, fmt.Errorf("router: slot %q: %w", p.slot, err)
			}
		}
	}
	return nil, &NoModelError{Slot: p.slot, Attempts: attempts}
}

// attempt runs one try under the model's TTFT and overall deadlines.
func (r *Router) attempt(ctx context.Context, m *model, key string, deadline time.Time, try func(context.Context, *model, *call) error) (err error, started bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	const (
		waiting int32 = iota
		begun
		abandoned
	)
	var state atomic.Int32
	start := r.clock.Now()
	ttft := r.clock.AfterFunc(m.ttft, func() {
		if state.CompareAndSwap(waiting, abandoned) {
			cancel(errTTFT)
		}
	})
	defer ttft.Stop()
	total := r.clock.AfterFunc(deadline.Sub(start), func() { cancel(errTimeout) })
	defer total.Stop()
	labels := prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider}
	c := &call{key: key, first: func() bool {
		if state.CompareAndSwap(waiting, begun) {
			ttft.Stop()
			r.metrics.ttft.With(labels).Observe(r.clock.Now().Sub(start).Seconds())
			return true
		}
		return state.Load() == begun
	}}
	err = try(actx, m, c)
	if err == nil && !c.first() {
		err = errAbandoned // answered, but after the TTFT budget had been given up on
	}
	if err != nil {
		switch cause := context.Cause(actx); {
		case ctx.Err() != nil:
		case errors.Is(cause, errTTFT):
			err = &ProviderError{Kind: KindTTFT, Err: fmt.Errorf("%w (%s)", errTTFT, m.ttft)}
		case errors.Is(cause, errTimeout):
			err = &ProviderError{Kind: KindTimeout, Err: fmt.Errorf("%w (%s)", errTimeout, m.timeout)}
		}
	}
	return err, state.Load() == begun
}

// classify maps an attempt error to its kind.
func classify(ctx context.Context, err error) (Kind, *ProviderError) {
	if ctx.Err() != nil {
		return KindCanceled, nil
	}
	var ce *callbackError
	if errors.As(err, &ce) {
		return KindAborted, nil
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Kind, pe
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout, nil
	}
	return KindInternal, nil
}

// newKey returns a random idempotency key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Go >= 1.24
	return hex.EncodeToString(b[:])
}

func (r *Router) slot(name string) ([]*model, error) {
	if name == SlotSafety {
		// Its models classify; they cannot answer, listen or speak.
		return nil, fmt.Errorf("%w: slot %q is the classifier slot (use Classify)", ErrBadRequest, name)
	}
	ms, ok := r.slots[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownSlot, name)
	}
	return ms, nil
}
