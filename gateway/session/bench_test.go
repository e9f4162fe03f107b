package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// BenchmarkTextTurn is one chat turn through a session: input → local
// safety → converse (echo) → events read back from the stream.
func BenchmarkTextTurn(b *testing.B) {
	benchTurn(b, "how was your day", false)
}

// BenchmarkCrisisInForceTurn is a crisis turn in a session whose crisis
// card is already in force: the card is not sent again.
func BenchmarkCrisisInForceTurn(b *testing.B) {
	benchTurn(b, "I want to end my life", true)
}

func benchTurn(b *testing.B, text string, card bool) {
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: testLayout})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	first := 2 // session.created, notice
	if card {
		// The first crisis turn shows the card; later ones keep it in force.
		if err := s.Handle(ctx, &event.InputText{Text: text}); err != nil {
			b.Fatal(err)
		}
		first += 5
	}
	for range first {
		if _, err := st.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	want := 4 // transcript.final, reply.delta, caption, reply.done
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Handle(ctx, &event.InputText{Text: text}); err != nil {
			b.Fatal(err)
		}
		for range want {
			if _, err := st.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSpokenAnswer is one action offered and answered: Propose (its
// prompt laid out for the Meta display, the offer as a reply of its own),
// then a transcript "no thanks" settled without a model turn.
func BenchmarkSpokenAnswer(b *testing.B) {
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: testLayout})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	readUntil := func(t event.Type) {
		for {
			raw, err := st.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var e event.Envelope
			if err := json.Unmarshal(raw, &e); err != nil {
				b.Fatal(err)
			}
			if e.Type == t {
				return
			}
		}
	}
	readUntil(event.TypeNotice)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("act_%d", i)
		s.Propose("", session.Action{ID: id, Type: "reminder", Title: "Remind me to call Sam at 6 pm", Summary: "A reminder today at 18:00."})
		readUntil(event.TypeReplyDone) // the offer
		s.SubmitTurn(fmt.Sprintf("v%d", i), "no thanks")
		readUntil(event.TypeReplyDone) // "Okay, I won't."
	}
}
