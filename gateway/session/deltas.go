package session

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Reply text reaches the client in a few deltas per reply, cut where a
// reader pauses — after a sentence, or after a clause once some text has
// gathered — instead of one event per model token. The cuts never hold
// back the safety card (it goes out before any reply text) nor the first
// audio: a voice session speaks whole sentences, and a sentence's delta
// leaves as soon as the text after it begins.
const (
	// clauseMinBytes: a clause boundary (", ", "; ", ": ", a dash) cuts
	// only once this much text waits, so "Oh, " is not an event alone.
	clauseMinBytes = 40
	// maxPendingBytes: text with no boundary is cut at its last space once
	// this long.
	maxPendingBytes = 160
	// maxPendingAge: text that has waited this long goes out as it is (a
	// model that stalls mid-sentence still shows its words).
	maxPendingAge = 400 * time.Millisecond
	// maxDeltaBytes bounds one reply.delta (a long reply released at once
	// is sent as a few of them, each within a data-channel message).
	maxDeltaBytes = 4096
)

// deltaBuf gathers a turn's released reply text until a cut; the turn
// flushes it after maxPendingAge and at the end of the reply. Not safe for
// concurrent use: the turn's mu guards it.
type deltaBuf struct {
	pending string
}

// add appends a piece and returns the text to send now ("" while it waits
// for a boundary).
func (b *deltaBuf) add(piece string) string {
	b.pending += piece
	cut := lastCut(b.pending)
	if cut == 0 && len(b.pending) >= maxPendingBytes {
		cut = strings.LastIndexByte(b.pending, ' ') + 1
		if strings.TrimSpace(b.pending[:cut]) == "" {
			cut = len(b.pending) // one very long word
		}
	}
	out := b.pending[:cut]
	b.pending = b.pending[cut:]
	return out
}

// waiting reports whether text waits for a cut.
func (b *deltaBuf) waiting() bool { return b.pending != "" }

// flush returns whatever waits (the end of the reply).
func (b *deltaBuf) flush() string {
	out := b.pending
	b.pending = ""
	return out
}

// lastCut is the byte offset just after the last boundary in s at which
// the text before it can go out: after the space or newline that follows
// a sentence end (".", "!", "?", "…", with any closing quotes or
// brackets), after a newline, or — past clauseMinBytes — after the space
// that follows a clause mark. 0: none.
func lastCut(s string) int {
	for i := len(s) - 1; i > 0; i-- {
		c := s[i]
		if c == '\n' {
			return i + 1
		}
		if c != ' ' {
			continue
		}
		j := i // s[:j] is the text before the space, its closers skipped
		for j > 0 && strings.IndexByte(`"')]`, s[j-1]) >= 0 {
			j--
		}
		r, _ := utf8.DecodeLastRuneInString(s[:j])
		for j > 0 && (r == '”' || r == '’') {
			j -= utf8.RuneLen(r)
			r, _ = utf8.DecodeLastRuneInString(s[:j])
		}
		switch {
		case r == '.' || r == '!' || r == '?' || r == '…':
			return i + 1
		case (r == ',' || r == ';' || r == ':' || r == '—' || r == '–') && i+1 >= clauseMinBytes:
			return i + 1
		}
	}
	return 0
}

// chunks splits s into pieces of at most max bytes, each cut after a
// space where there is one (a single longer word is cut on a rune
// boundary).
func chunks(s string, max int) []string {
	var out []string
	for len(s) > max {
		cut := strings.LastIndexByte(s[:max], ' ') + 1
		if cut == 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
