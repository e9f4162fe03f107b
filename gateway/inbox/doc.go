// Package inbox owns the session inbox: POST /v1/sessions/{id}/messages
// (scope conversations:write) puts a partner's text in an open session's
// queue, and the queue hands it to the session as a turn once the running
// turn is over (the extension API's sessions.send).
//
// Invariants:
//   - A message is stored durably (Store; bbolt in production) before the
//     request answers {"outcome":"queued"}, and removed only after Deliver
//     accepted it. A crash in between delivers it again (at least once).
//   - A session receives one inbox message per turn, oldest first per source,
//     and only between turns: after Deliver the inbox waits for TurnFinished.
//   - Messages found in the store when the Inbox starts (a gateway restart)
//     are held: they reach the session only after the person admits their
//     source. The inbox asks through Options.Ask with an Admission naming the
//     last part of the source id ("acme.lookout" → "lookout"); the answer
//     comes back as Admit (action.approve of Admission.ActionID) or Refuse
//     (action.decline), which drops them. Nothing is admitted by silence:
//     unanswered, they expire after Config.HoldFor.
//   - An unknown session and another partner's session are the same 404.
//
// The inbox starts no goroutines; it acts in the callers' goroutines and
// calls Deliver and Ask outside its lock.
package inbox
