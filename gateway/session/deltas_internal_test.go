package session

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLastCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the text before the cut
	}{
		{"Hello there.", ""},
		{"Hello there. How", "Hello there. "},
		{"One. Two! Three? Four", "One. Two! Three? "},
		{`He said "stop." Then`, `He said "stop." `},
		{"Wait (really!) ok", "Wait (really!) "},
		{"“Fine.” Then", "“Fine.” "},
		{"Well… maybe", "Well… "},
		{"Oh, I see", ""}, // a clause cut needs 40 bytes before it
		{"That sounds like a really heavy day for you, and", "That sounds like a really heavy day for you, "},
		{"A long first clause that runs on and on — and on", "A long first clause that runs on and on — "},
		{"pi is 3.14 roughly", ""},
		{"line one\nline", "line one\n"},
		{" leading", ""},
	} {
		if got := c.in[:lastCut(c.in)]; got != c.want {
			t.Errorf("lastCut(%q) keeps %q, want %q", c.in, got, c.want)
		}
	}
}

func TestChunks(t *testing.T) {
	s := strings.Repeat("ab ", 10) + strings.Repeat("é", 20) // words, then one 40-byte word
	got := chunks(s, 8)
	if strings.Join(got, "") != s {
		t.Fatalf("chunks lose text: %q", got)
	}
	for i, c := range got {
		switch {
		case len(c) > 8:
			t.Fatalf("chunk %d is %d bytes", i, len(c))
		case strings.HasPrefix(c, "ab") && !strings.HasSuffix(c, " "):
			t.Fatalf("chunk %d %q is not cut after a space", i, c)
		case !utf8.ValidString(c):
			t.Fatalf("chunk %d %q splits a rune", i, c)
		}
	}
	if chunks("", 8) != nil {
		t.Fatal("empty text makes a chunk")
	}
}
