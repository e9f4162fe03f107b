// Package webhook delivers signed events to partners' HTTPS endpoints:
// turn_finished and the action.* events.
//
// Invariants:
//   - Every request carries VERA-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
//     "<t>.<raw body>"> under the endpoint's secret, computed at each attempt
//     (so a retry's timestamp is fresh), and VERA-Event-Id, which is the same
//     on every attempt of an event and on every endpoint it goes to.
//   - An event is stored (Store, bbolt in production) before Publish returns;
//     its endpoint's sender sends it and, on failure, retries after 1 s,
//     10 s and 60 s (Schedule, a cenkalti/backoff BackOff), then records it as
//     failed. A restart resumes pending deliveries from the store; a delivery
//     cut short by Close is sent again, so receivers dedupe by event id.
//   - Only a 2xx answer counts as delivered; redirects are not followed.
//   - Secrets never enter the store: a delivery names its partner and URL and
//     the secret is looked up from the configured endpoints at each attempt.
//   - Isolation: every partner endpoint has its own queue, pending cap
//     (Config.MaxPending) and sender, one attempt at a time, oldest due
//     first; a slow, failing or full endpoint delays and refuses only its
//     own events.
//   - Targets: internal addresses are refused at start (ValidateTargets)
//     and at every dial (a net.Dialer Control hook on the resolved
//     address) unless Config.AllowPrivateTargets; dev mode allows loopback.
//
// Goroutines: one sender per configured endpoint, each with at most one
// request in flight, all owned by the Dispatcher and joined by Close. Time
// comes from an injected clock.Clock.
package webhook
