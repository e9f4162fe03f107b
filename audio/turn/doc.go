// Package turn is the turn detector: a state machine over per-frame speech
// probabilities, driven only by sample time (the count of samples fed in,
// never the wall clock), so the same audio always gives the same turns.
//
// Idle → (p ≥ Threshold) candidate → (speech held ≥ MinSpeechMs with
// p ≥ ExitThreshold) speaking: SpeechStarted, whose AudioStart includes
// PrefixPaddingMs of audio before the first speech frame. Speaking → (no
// speech evidence for SilenceDurationMs, or the turn reached MaxTurnMs)
// SpeechStopped, whose SpeechEnd is the true end of speech: the end of the
// last frame of speech evidence, not the end of the hangover. Speech
// evidence is the unsmoothed probability (ProcessRaw's raw) at or above
// Threshold while p is at or above ExitThreshold, in a run of at least
// EndRunMs or with p at or above Threshold as well, so the silence is
// counted from the back-dated end of speech (the smoother's lag is not
// added to it), and isolated noise or breath frames neither extend the turn
// nor move its end. The decision is therefore SilenceDurationMs after
// SpeechEnd, rounded up to the frame. The SpeechStopped event carries the
// turn's audio from AudioStart to SpeechEnd.
// While the assistant is speaking (SetAssistantSpeaking), user speech that
// lasts BargeInMs emits OverlapSpeech once per turn, for barge-in.
//
// Ownership: the Detector owns its buffers. Events returned by Process, and
// Event.Audio, are valid until the next call to Process or Reset; copy them to
// keep them. The turn buffer is bounded by PrefixPaddingMs+MaxTurnMs and is
// reused between turns, so steady-state Process allocates nothing. Not
// goroutine-safe: one owner per stream.
package turn
