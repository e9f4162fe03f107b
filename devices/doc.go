// Package devices owns the capability profiles of the surfaces a reply can
// land on: smart glasses (Meta Ray-Ban Display, Even G1/G2, MentraOS), phones,
// browsers and voice-only clients.
//
// A Profile describes a device's audio path, its visual and voice surfaces
// (pixel size, colour model, fonts, text budget, inputs) and its delivery
// limits (ack timeout, update throttle, whether it confirms renders).
//
// Invariants:
//   - Built-in profiles are immutable values; Lookup returns a deep copy, so a
//     caller can never change what another session sees.
//   - Every built-in visual surface's geometry fits its pixel height
//     (Surface.Validate checks margins + title + body + controls).
//   - Negotiate only narrows a profile: a client may ask for a smaller text
//     budget, slower updates or fewer inputs, never more than the hardware
//     offers, and voice input is never removed from a surface that has it.
//   - A profile without render confirmation (MentraOS) means safety content
//     must also be spoken; callers check Profile.RenderConfirmation.
package devices
