package event

import (
	"testing"

	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

func BenchmarkDecodeInputText(b *testing.B) {
	in := []byte(`{"type":"input.text","text":"I have had a long day and I would like to talk about it for a bit"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Decode(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRejectUnknownField(b *testing.B) {
	in := []byte(`{"type":"display.ack","card_id":"c1","page":1,"surface":"display","extra":true}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(in); err == nil {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkEncodeSafetyCard(b *testing.B) {
	card := SafetyCard{CardID: "card_turn_1_1", TurnID: "turn_1", RequiresAck: true, Level: safety.LevelCrisis, DisplayRequired: true,
		Resources: []safety.Resource{{ID: "us-988", Name: "988 Suicide & Crisis Lifeline", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}},
		Surfaces: []CardSurface{{Surface: "display", Profile: "meta-rayban-display", Width: 600, Height: 600, Pages: []glasses.OpsPage{{N: 1, Of: 1, Title: "Help is here",
			Lines: []string{"988 Suicide & Crisis Lifeline", "Call 988"}, Ops: []glasses.Op{{Op: "panel", W: 600, H: 600}, {Op: "text", X: 24, Y: 60, Text: "Call 988", Px: 40}}}}}}}
	env := Envelope{Type: TypeSafetyCard, Seq: 42, SessionID: "sess_abcdefghijkl", At: 1_800_000_000_000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(env, card); err != nil {
			b.Fatal(err)
		}
	}
}
