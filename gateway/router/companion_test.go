package router

import (
	"regexp"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/safety"
)

// forbidden are claims the companion must never make.
var forbidden = regexp.MustCompile(`(?i)\b(i am|i'm) (a |an )?(human|real person|person|therapist|counsel+or|doctor|emergency service|emergency care)\b|\bi am (not )?an? ai\b.*\bhuman\b`)

func companionRouter(t *testing.T, assess Assessor) *Router {
	t.Helper()
	// The listen slot names an HTTP model so no embedded decoder loads.
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{{Name: "asr", Provider: ProviderOpenAI, BaseURL: "http://127.0.0.1:1", Model: "whisper"}}
	cfg.Slots = map[string][]string{SlotListen: {"asr"}}
	r, err := New(cfg, nil, Options{Assess: assess})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestCompanionReflectsAsksAtMostOneAndStreams(t *testing.T) {
	r := companionRouter(t, nil)
	inputs := []string{
		"I feel like my job is crushing me and I can't sleep.",
		"My sister won't talk to me anymore",
		"Are you a real person?",
		"are u a therapist",
		"I was so tired today. Nothing went right!",
		"ok",
		"Can you help me? I don't know what to do?",
		"你好，我今天很累",
	}
	for _, in := range inputs {
		var deltas []string
		reply, err := r.Converse(tctx(t), ConverseRequest{Text: in}, func(d string) error {
			deltas = append(deltas, d)
			return nil
		})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		msg := reply.Message
		if strings.Join(deltas, "") != msg || len(deltas) < 2 {
			t.Errorf("%q: deltas %q do not stream the reply %q", in, deltas, msg)
		}
		if q := strings.Count(msg, "?"); q > 1 {
			t.Errorf("%q: %d questions in %q", in, q, msg)
		}
		if forbidden.MatchString(msg) {
			t.Errorf("%q: reply claims to be what it is not: %q", in, msg)
		}
		if reply.Model != EmbeddedConverse || reply.Provider != ProviderCompanion || reply.Safety.Level != safety.LevelNone {
			t.Errorf("%q: reply meta %+v", in, reply)
		}
		again, _ := r.Converse(tctx(t), ConverseRequest{Text: in}, nil)
		if again.Message != msg {
			t.Errorf("%q: not deterministic: %q then %q", in, msg, again.Message)
		}
	}
	reply, _ := r.Converse(tctx(t), ConverseRequest{Text: "I feel like my job is crushing me"}, nil)
	if !strings.Contains(reply.Message, "your job is crushing you") {
		t.Errorf("no reflection in %q", reply.Message)
	}
	reply, _ = r.Converse(tctx(t), ConverseRequest{Text: "Are you human?"}, nil)
	if !strings.Contains(reply.Message, "not a person") || !strings.Contains(reply.Message, "not a therapist") || !strings.Contains(reply.Message, "not emergency care") {
		t.Errorf("identity question answered as %q", reply.Message)
	}
}

func TestCompanionUsesInjectedAssessor(t *testing.T) {
	var gotHistory []string
	var gotText string
	res := safety.Resource{ID: "us-988", Name: "988", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}
	r := companionRouter(t, func(history []string, text string) safety.Assessment {
		gotHistory, gotText = history, text
		return safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{res}}
	})
	reply, err := r.Converse(tctx(t), ConverseRequest{
		History: []Message{{Role: RoleUser, Text: "rough week"}, {Role: RoleAssistant, Text: "It sounds like a rough week."}},
		Text:    "I want to end it",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gotText != "I want to end it" || len(gotHistory) != 1 || gotHistory[0] != "rough week" {
		t.Fatalf("assessor saw history %q text %q", gotHistory, gotText)
	}
	if reply.Safety.Level != safety.LevelCrisis || !reply.Safety.DisplayRequired || len(reply.Safety.Resources) != 1 || reply.Safety.Source != safety.SourceLocal {
		t.Fatalf("safety %+v", reply.Safety)
	}
	if !strings.Contains(reply.Message, "not emergency care") || strings.Contains(reply.Message, "?") || forbidden.MatchString(reply.Message) {
		t.Fatalf("crisis reply %q", reply.Message)
	}
}

func TestCompanionOneshotIsShortReflection(t *testing.T) {
	r := companionRouter(t, nil)
	// A naming prompt gets a title instead (TestCompanionNamesConversations).
	out, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, SystemPrompt: "Summarise this voyage in five words or fewer.",
		Messages: []Message{{Role: RoleUser, Text: "plot a course for the shiny buttons"}}, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "plot a course for the" || out.Model != EmbeddedConverse || out.Provider != ProviderCompanion {
		t.Fatalf("got %+v", out)
	}
}
