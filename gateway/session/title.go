package session

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// TitleOutcome is what SetTitle did, with the extension API's setTitle
// semantics.
type TitleOutcome string

const (
	// TitleSet: the session had never had a name and now has this one.
	TitleSet TitleOutcome = "set"
	// TitleNamed: the session already had a name (automatic, or one the
	// person set or cleared) and keeps it.
	TitleNamed TitleOutcome = "named"
	// TitleNotFound: nothing was set because there is no open session to
	// name — or, on a session that has never been named, because the title
	// was blank after normalising (NormalizeTitle). A blank title never
	// counts as a name, so a later non-blank one can still be set.
	TitleNotFound TitleOutcome = "not_found"
)

// MaxTitleChars bounds a title in characters; a longer one is cut at the
// last word boundary before it (the person's own rename is limited to it
// by the client event's validation).
const MaxTitleChars = event.MaxTitleChars

// NormalizeTitle trims a title, turns every run of whitespace (line breaks
// included) into one space, drops control characters and cuts it to
// MaxTitleChars at a word boundary. Invalid UTF-8 is replaced.
func NormalizeTitle(title string) string {
	title = strings.ToValidUTF8(title, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range title {
		switch {
		case unicode.IsSpace(r) || r == '\u200b':
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			// Format characters (bidi overrides and isolates, joiners, marks)
			// would reorder or hide what the title shows.
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= MaxTitleChars {
		return out
	}
	cut := []rune(out)[:MaxTitleChars]
	if i := strings.LastIndexByte(string(cut), ' '); i > 0 {
		return string(cut)[:i]
	}
	return string(cut)
}

// titles is the session's name. Its lock is taken before events'.
type titles struct {
	mu     sync.Mutex // mu guards the fields below
	title  string
	titled bool // named once (automatically, or by the person) — SetTitle no longer applies
}

func (t *titles) get() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.title
}

// Title returns the session's current title ("" when it has none, or the
// person cleared it).
func (s *Session) Title() string { return s.names.get() }

// SetTitle names the session automatically (the snappy slot after the
// first completed turn, or an extension): only if it has never had a
// name. A name the person set wins, and so does one the person cleared;
// an earlier automatic name stays too. The title is normalised
// (NormalizeTitle); blank after that, nothing changes and the outcome is
// TitleNamed when the session already has a name, else TitleNotFound. A
// closed session is TitleNotFound. Every surface gets session.title when
// the title changes.
func (s *Session) SetTitle(title string) TitleOutcome {
	title = NormalizeTitle(title)
	n := &s.names
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case s.ev.isClosed():
		return TitleNotFound
	case n.titled:
		return TitleNamed
	case title == "":
		return TitleNotFound
	}
	n.titled, n.title = true, title
	s.ev.emit(event.TypeSessionTitle, event.SessionTitle{Title: title, By: event.TitleByAuto})
	return TitleSet
}

// Rename is the person's own rename (or clear, with ""): it always wins,
// over an automatic title too, and after it SetTitle never changes the
// title again. The title is normalised as in SetTitle. session.title goes
// out when the title changes.
func (s *Session) Rename(title string) {
	title = NormalizeTitle(title)
	n := &s.names
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.ev.isClosed() {
		return
	}
	n.titled = true
	if n.title == title {
		return
	}
	n.title = title
	s.ev.emit(event.TypeSessionTitle, event.SessionTitle{Title: title, By: event.TitleByUser})
}

// SetTitle names the open session id as Session.SetTitle does;
// TitleNotFound when no such session is open.
func (m *Manager) SetTitle(id, title string) TitleOutcome {
	s, ok := m.Get(id)
	if !ok {
		return TitleNotFound
	}
	return s.SetTitle(title)
}
