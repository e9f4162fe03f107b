// Package titles names sessions: the extension API's vera.titles, built in.
// After a session's first turn that the person started, a Titler asks the
// router's snappy slot for a name of five words or fewer, off the turn
// path; Route is PUT /v1/sessions/{id}/title, setTitle for partners.
//
// The rules of what a title is — normalisation and MaxTitleChars — are
// the session's (session.NormalizeTitle, Session.SetTitle): a name the
// person set or cleared always wins, and SetTitle answers set, named or
// not_found. This package adds only what naming by a model needs: the
// model's answer cleaned to a title (first line, no "Title:" label,
// quotes, markdown or end punctuation, at most five words).
//
// Goroutines: each naming call runs in its own goroutine owned by the
// Titler, at most eight in flight (past that a session stays unnamed), each
// bounded by 20 s; Close cancels and joins them.
package titles
