package chat_test

import (
	"testing"

	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// BenchmarkChatTurn is one text turn over a real loopback websocket:
// input.text out, transcript.final … reply.done back.
func BenchmarkChatTurn(b *testing.B) {
	s := newServer(b, func(c *chat.Config, _ *session.Config) { c.EventsPerSecond = 1e6; c.Burst = 1 << 20 })
	c := s.dial(b, "good")
	c.send(`{"type":"hello","device":"browser"}`)
	c.until(event.TypeNotice)
	b.ReportAllocs()
	for b.Loop() {
		c.send(`{"type":"input.text","text":"how was your day"}`)
		c.until(event.TypeReplyDone)
	}
}
