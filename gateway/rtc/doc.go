// Package rtc terminates WebRTC for live voice sessions: WHIP-style HTTP
// signaling (POST offer → 201 answer, PATCH trickle/ICE restart, DELETE), one
// pion PeerConnection per session, inbound Opus RTP handed to a per-session
// AudioSink, outbound Opus paced by a ticker, and the "events" data channel
// carried as opaque JSON bytes. It knows nothing about turns, transcripts or
// safety: the conversation layer plugs in through SessionFactory.
//
// Invariants:
//   - Every PeerConnection gets its own MediaEngine and interceptor registry;
//     the SettingEngine (UDP mux or port range, NAT rewrite, mDNS off, filters)
//     is shared and immutable after NewEngine.
//   - Opus is declared as opus/48000/2, payload type 111,
//     "minptime=10;useinbandfec=1", even though audio is mono.
//   - Every goroutine this package starts is owned by a Conn (read loops,
//     RTCP drain, sender, supervisor) or the Handler, and Close(ctx) on the
//     owner stops and joins it. PeerConnection.GracefulClose is only called
//     from the Conn's supervisor goroutine, never from a pion callback.
//   - A Conn ends on ICE "failed" held for Config.ICEFailedGrace (not on
//     "disconnected"), on DELETE, on the peer's DTLS close, on Config.IdleTimeout without inbound media
//     or events, or when its owner closes it.
//   - Packet payloads passed to AudioSink.OnRTP and event bytes passed to
//     EventSink.OnEvent are only valid during the call; copy to keep them.
package rtc
