package router

import (
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/safety"
)

// TestCompanionNamesConversations: asked to name a conversation (the
// gateway's title prompt through the snappy slot), the offline companion
// answers a name of at most five words taken from the first message, never
// a reflection; concerning messages get a neutral name that repeats
// nothing the person disclosed.
func TestCompanionNamesConversations(t *testing.T) {
	r := companionRouter(t, func(_ []string, text string) safety.Assessment {
		if strings.Contains(text, "end it all") {
			return safety.Assessment{Level: safety.LevelCrisis}
		}
		if strings.Contains(text, "hopeless") {
			return safety.Assessment{Level: safety.LevelElevated}
		}
		return safety.Assessment{}
	})
	for _, c := range []struct{ in, want string }{
		{"I feel anxious about my exam tomorrow", "Anxious about exam tomorrow"},
		{"plot a course for the shiny buttons", "Plot course for shiny buttons"},
		{"Hi VERA! My sister won't talk to me anymore.", "Sister won't talk to anymore"},
		{"Can you help me plan a birthday party for my dad next week?", "Help plan birthday party"},
		{"I’m moving to Berlin in March and I'm nervous", "Moving to Berlin in March"},
		{"hello", "New conversation"},
		{"I want to end it all tonight", "A difficult moment"},
		{"everything feels hopeless lately", "Something heavy to share"},
	} {
		out, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, SystemPrompt: "Name this conversation in five words or fewer.",
			Messages: []Message{{Role: RoleUser, Text: c.in}}, MaxTokens: 32})
		if err != nil {
			t.Fatal(err)
		}
		if out.Text != c.want {
			t.Errorf("title of %q = %q, want %q", c.in, out.Text, c.want)
		}
		if n := len(strings.Fields(out.Text)); n == 0 || n > 5 {
			t.Errorf("title of %q has %d words", c.in, n)
		}
	}
}

func TestNamingPrompt(t *testing.T) {
	for _, c := range []struct {
		system string
		n      int
		ok     bool
	}{
		{"Name this conversation in five words or fewer.", 5, true},
		{"Name this voyage in five words or fewer.", 5, true},
		{"Title the chat in 3 words or less", 3, true},
		{"Name this conversation.", 5, true},
		{"Summarise this conversation in five words or fewer.", 0, false},
		{"", 0, false},
	} {
		n, ok := namingPrompt(c.system)
		if n != c.n || ok != c.ok {
			t.Errorf("namingPrompt(%q) = %d, %v; want %d, %v", c.system, n, ok, c.n, c.ok)
		}
	}
	// Other oneshot prompts still get the reflection.
	r := companionRouter(t, nil)
	out, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, SystemPrompt: "Summarise this.",
		Messages: []Message{{Role: RoleUser, Text: "I lost my keys again"}}})
	if err != nil || out.Text != "you lost your keys again" {
		t.Fatalf("reflection %q, %v", out.Text, err)
	}
}
