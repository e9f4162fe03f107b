// Package event owns VERA's session event protocol: the envelope every
// event travels in, the server→client payloads, the client→server payloads,
// and the strict decoder for client events.
//
// The protocol is the same on the websocket (gateway/chat) and on the WebRTC
// data channel (gateway/rtc). Every server event is one JSON object with the
// envelope fields type, seq, session_id and at (epoch milliseconds) next to
// its payload fields. seq increases by one per session; clients resume with
// the last seq they saw.
//
// Invariants: Decode never panics; it rejects oversized input, invalid JSON,
// unknown event types, unknown fields and wrong field types with a
// *DecodeError naming the field; a value it returns has passed Validate. The
// package has no state and starts no goroutines.
package event
