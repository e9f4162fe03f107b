// Package jitter holds one RTP Opus stream's jitter buffer.
//
// The network side pushes packets as they arrive (Push: sequence number, RTP
// timestamp, payload, arrival time in RTP clock ticks); the media clock pulls
// one decoded 20 ms frame per tick (Pull). Packets are keyed by sequence
// number, unwrapped to 64 bits with uint16 wrap arithmetic (timestamps likewise
// with uint32), so wrap-around is invisible to the logic.
//
// Per Pull the buffer plays the next packet; when it is missing but later
// packets are buffered it is lost: recovered from the next packet's in-band
// FEC when that packet is present and carries FEC, concealed with PLC
// otherwise. When nothing is buffered (network gap or DTX) it conceals for at
// most MaxConcealFrames, then plays silence, and rebuffers to the target delay
// before playing again; a sender timestamp jump with contiguous sequence
// numbers (DTX) therefore costs no loss. Duplicates and packets older than the
// play point are dropped. The buffered span is bounded: above MaxDelayMs the
// oldest frames are dropped. The target delay is fixed or, when Adaptive,
// one frame plus the larger of three RFC 3550 interarrival jitter estimates
// and the peak delay of recent packets over the quickest (decaying by 10 ms
// per second), within [MinDelayMs, MaxDelayMs]: a clean stream plays each
// packet at the first pull after it arrives. Delay gained in a burst (an
// underrun after a stall, a loss or a jitter spike) drains back: when the
// buffered span stayed a frame above the target for ShrinkWindowMs, one
// frame is skipped, a quiet one (within 6 dB of the decoded floor) if one
// comes within 2 s, counted in Stats.Skipped.
//
// Packets must each hold one 20 ms Opus frame (the WebRTC default); a packet
// of another duration fails DecodeFrame and is concealed and counted Corrupt.
//
// Ownership and cost: Push copies the payload into preallocated slots (the
// caller may reuse its buffer at once); Pull writes into the caller's pcm. No
// allocation after New. Not goroutine-safe: one owner (the session's media
// goroutine) calls Push and Pull, or the caller serialises them.
package jitter
