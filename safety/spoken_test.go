package safety

import (
	"strings"
	"testing"
)

func TestSpoken(t *testing.T) {
	tests := []struct {
		a    Action
		want string
	}{
		{Action{Type: ActionCall, Value: "988"}, "Call nine eight eight. Again: nine eight eight."},
		{Action{Type: ActionCall, Value: "116 123"}, "Call one one six, one two three. Again: one one six, one two three."},
		{Action{Type: ActionCall, Value: "13 11 14"}, "Call one three, one one, one four. Again: one three, one one, one four."},
		{Action{Type: ActionText, Value: "741741", Label: "Text HOME to 741741"},
			"Text the word HOME to seven four one, seven four one. Again: text HOME to seven four one, seven four one."},
		{Action{Type: ActionText, Value: "988", Label: "Text 988"}, "Text nine eight eight. Again: text nine eight eight."},
		{Action{Type: ActionText, Value: "678678", Label: "text start to 678678"}, "Text six seven eight, six seven eight. Again: text six seven eight, six seven eight."},
		{Action{Type: ActionCall, Value: "0800-0113"}, "Call zero eight zero zero, zero one one three. Again: zero eight zero zero, zero one one three."},
		{Action{Type: ActionCall, Value: "18004444444"}, "Call one, eight zero zero, four four four, four four four four. Again: one, eight zero zero, four four four, four four four four."},
		{Action{Type: ActionCall, Value: "+44 116 123"}, "Call plus four four, one one six, one two three. Again: plus four four, one one six, one two three."},
		{Action{Type: ActionChat, Value: "https://988lifeline.org/"}, "Chat online at nine eight eight lifeline dot org. Again: nine eight eight lifeline dot org."},
		{Action{Type: ActionURL, Value: "https://www.findahelpline.com"}, "Go to findahelpline dot com. Again: findahelpline dot com."},
	}
	for _, tt := range tests {
		if got := Spoken(tt.a); got != tt.want {
			t.Errorf("Spoken(%+v)\n got %q\nwant %q", tt.a, got, tt.want)
		}
	}
}

// TestSpokenNumberEveryDigitTwice: every digit of a call or text number is
// spoken, in order, in both halves; no digit is read as a cardinal.
func TestSpokenNumberEveryDigitTwice(t *testing.T) {
	for _, v := range []string{"988", "116 123", "13 11 14", "741741", "85258", "0800 111 0 111", "1234567890123"} {
		s := Spoken(Action{Type: ActionCall, Value: v})
		halves := strings.SplitN(s, "Again:", 2)
		if len(halves) != 2 {
			t.Fatalf("%s: not said twice: %q", v, s)
		}
		var digits []string
		for _, r := range v {
			if r >= '0' && r <= '9' {
				digits = append(digits, digitWords[r-'0'])
			}
		}
		for _, h := range halves {
			var got []string
			for _, w := range strings.FieldsFunc(h, func(r rune) bool { return r == ' ' || r == ',' || r == '.' }) {
				for _, d := range digitWords {
					if w == d {
						got = append(got, w)
					}
				}
			}
			if strings.Join(got, " ") != strings.Join(digits, " ") {
				t.Errorf("%s: half %q speaks %v, want %v", v, h, got, digits)
			}
		}
		for _, bad := range []string{"hundred", "thousand", "eleven", "twelve", "thirteen"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s spoken as a cardinal: %q", v, s)
			}
		}
	}
}

func TestSpokenResource(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.All() {
		s := SpokenResource(r)
		if !strings.HasPrefix(s, r.Name+".") {
			t.Errorf("%s: %q does not start with the name", r.ID, s)
		}
		for _, a := range r.Actions {
			if !strings.Contains(s, a.Spoken) {
				t.Errorf("%s: spoken resource lacks %q", r.ID, a.Spoken)
			}
		}
		if len(r.Actions) == 0 && !strings.Contains(s, r.Description) {
			t.Errorf("%s: no actions and no description spoken: %q", r.ID, s)
		}
	}
}
