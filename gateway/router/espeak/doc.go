// Package espeak speaks text offline with espeak-ng, sentence by sentence,
// as 16-bit mono PCM at the rate the caller asks (48 kHz for Opus, 16 kHz
// for telephony-grade paths).
//
// It runs the espeak-ng binary (one short-lived process per sentence)
// rather than libespeak-ng over cgo, on purpose: libespeak-ng keeps its
// voice and output state in process-wide globals (espeak_Initialize is
// once per process and synthesis is not reentrant), so a library binding
// would serialise every voice session behind one lock and a crash in the
// synthesiser would take the gateway down; a process per sentence runs
// sessions in parallel, is killed at once on cancellation (barge-in) and
// needs only the espeak-ng package, not its -dev headers. Process start is
// a few milliseconds, small beside synthesis, and because each sentence is
// its own process the first audio is ready after the first sentence.
//
// Invariants: output is mono int16 at Config.SampleRate or the rate asked
// per call; every process is waited for before Speak returns; stdout reads
// are bounded by Config.MaxSentenceBytes.
package espeak
