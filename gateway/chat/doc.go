// Package chat serves GET /v1/chat: a websocket (github.com/coder/websocket)
// carrying VERA's event protocol (package event) to a session (package
// session), the same protocol the WebRTC data channel carries.
//
// Rules it enforces: the client token travels as the second subprotocol
// after "vera.v1" or as ?token= (browsers cannot set headers) and is checked
// by the injected Authenticate; origins other than the request's own are
// refused unless configured; the first event is a hello (new session or
// resume with token + last_seq); every later frame is rate limited and
// decoded strictly, and bad input (invalid JSON, unknown type or field,
// wrong field type, text over 8 000 characters) gets an error event while
// the connection stays usable; frames over Config.ReadLimitBytes close the
// connection (1009) at the websocket layer.
//
// Outbound: the connection reads its session's replay log at its own pace
// (see package session); a reader that falls behind the log, or whose
// socket does not take a write within Config.WriteTimeout, is closed with
// 1008 and a reason, and nothing else waits for it. Keep-alive pings every
// Config.PingInterval; no pong within Config.PingTimeout closes the
// connection. Each connection's goroutines (reader, writer, pinger) are
// joined before ServeHTTP returns; Handler.Close ends every connection.
package chat
