// Package hooks follows sessions' lives for the partner's features around
// them: it is the session manager's OnOpened/OnClosed hooks and its
// TurnObserver, and the inbox's way into sessions.
//
//   - It knows the open sessions (from OnOpened to OnClosed, so a hang-up's
//     declines still find their owner) and answers Get for the action
//     flow, the title route and the inbox.
//   - It links the inbox (gateway/inbox) to sessions: a message becomes a
//     spawned turn between turns, an admission prompt an action on every
//     surface; a finished turn frees the session for the next message.
//     Held messages past their hold expire on the clock, every minute.
//   - After each finished turn the partner's webhooks get turn_finished
//     (with the person's prompt unless the inbox spawned the turn), and
//     the first turn the person started names the session
//     (gateway/titles), off the turn path.
//
// Goroutines: one expiry loop, owned by Hooks and joined by Close.
package hooks
