package voice

import (
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// Config is the voice pipeline's configuration (yaml key "voice").
type Config struct {
	Jitter jitter.Config `yaml:"jitter"`
	Codec  codec.Config  `yaml:"codec"`
	VAD    vad.Config    `yaml:"vad"`
	// Turn is turn-taking (audio/turn/README.md): policy fixed (default)
	// or adaptive, silence_duration_ms (the whole wait with the fixed
	// policy, the shortest with the adaptive one), max_silence_ms (the
	// longest), weights_file, barge_in_ms, backchannel_ms and the VAD
	// thresholds.
	Turn turn.Config `yaml:"turn"`
	// ResumeAfterMs is how long paused playout waits for words after a
	// barge-in before it resumes (a false interruption): that much of the
	// speech after the pause, heard by the recogniser.
	ResumeAfterMs int `yaml:"resume_after_ms"`
	// PartialEveryMs is how often transcript.partial is sent during speech.
	PartialEveryMs int `yaml:"partial_every_ms"`
	// EchoGuard uses the outbound audio as a reference so that the
	// gateway's own voice, leaking back from an open-ear speaker, does not
	// barge in.
	EchoGuard bool `yaml:"echo_guard"`
	// Language is the listen hint (ISO-639-1).
	Language string `yaml:"language"`
	// SpeakQueue bounds sentences waiting for synthesis.
	SpeakQueue int `yaml:"speak_queue"`
	// PhraseCache is how many fixed phrases (the spoken AI disclosure, per
	// text and encoder settings) are kept synthesised and Opus-encoded for
	// all sessions, least recently used evicted; 0 synthesises them per
	// session.
	PhraseCache int `yaml:"phrase_cache"`
	// RecordDir, when set, records every session into RecordDir/<session
	// id>/ (record.go). Empty: off. It records people's voices.
	RecordDir string `yaml:"record_dir"`
	// ListenWaitMs is how long a turn may wait, from the start of its
	// speech, for a recogniser (the embedded ones are a bounded pool). A turn
	// that gets none is answered at once, spoken and shown: "I'm a little
	// busy — could you say that again?" (notice kind "busy"), instead of
	// silence. A turn that got one but whose final transcript is not ready
	// in time is answered busy so that the busy answer's first packet reaches
	// the client this long after the true end of speech (decided busyLead
	// earlier, the end of turn counted up to 500 ms: finalWaitAfterStop); a
	// session whose safety level is raised waits for its words.
	ListenWaitMs int `yaml:"listen_wait_ms"`
	// finalWait, when set (tests), replaces the final's wait after
	// input.speech_stopped that ListenWaitMs gives (finalWaitAfterStop):
	// the tests of other behaviour run under -race on loaded machines, where
	// a final can take seconds, and are not about the busy answer.
	finalWait time.Duration
	// AdmitListenWaitMs protects live sessions before they hear that: while
	// a turn has waited this long for a recogniser within the last
	// admitHold, new voice sessions are refused (503 + Retry-After). 0
	// admits by session count alone.
	AdmitListenWaitMs int `yaml:"admit_listen_wait_ms"`
}

// DefaultConfig is BRIEF §7's turn-taking with a 16 kHz decoder.
func DefaultConfig() Config {
	c := codec.DefaultConfig()
	c.DecodeRate = 16000
	return Config{
		Jitter: jitter.DefaultConfig(), Codec: c, VAD: vad.DefaultConfig(), Turn: turn.DefaultConfig(),
		ResumeAfterMs: 2000, PartialEveryMs: 300, EchoGuard: true, Language: "en", SpeakQueue: 64, PhraseCache: 8,
		ListenWaitMs: 1500, AdmitListenWaitMs: 500,
	}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	wrap := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	wrap("jitter", c.Jitter.Validate())
	wrap("codec", c.Codec.Validate())
	wrap("vad", c.VAD.Validate())
	if err := c.Turn.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("voice.%w", err)) // "voice.turn.<key>: …"
	}
	if c.Codec.DecodeRate != 16000 {
		errs = append(errs, errors.New("codec.decode_rate: the voice pipeline decodes at 16000"))
	}
	if c.ResumeAfterMs < 100 || c.ResumeAfterMs > 10000 {
		errs = append(errs, errors.New("resume_after_ms: must be in [100, 10000]"))
	}
	if c.PartialEveryMs < 20 {
		errs = append(errs, errors.New("partial_every_ms: must be at least 20"))
	}
	if c.SpeakQueue < 1 {
		errs = append(errs, errors.New("speak_queue: must be at least 1"))
	}
	if c.PhraseCache < 0 || c.PhraseCache > 64 {
		errs = append(errs, errors.New("phrase_cache: must be in [0, 64]"))
	}
	if c.ListenWaitMs < 100 || c.ListenWaitMs > 10000 {
		errs = append(errs, errors.New("listen_wait_ms: must be in [100, 10000]"))
	}
	if c.AdmitListenWaitMs < 0 || c.AdmitListenWaitMs > c.ListenWaitMs {
		errs = append(errs, errors.New("admit_listen_wait_ms: must be in [0, listen_wait_ms]"))
	}
	wrap("record_dir", checkRecordDir(c.RecordDir))
	return errors.Join(errs...)
}

// busyLead is how long before voice.listen_wait_ms the busy answer is
// decided, so that its first packet (Opus from the phrase cache, encoded
// once for all sessions: warmBusy) reaches the client by listen_wait_ms
// after the true end of speech rather than starting there: the notice's hop
// through the event pump and the pacer's next 20 ms frame, with room for a
// loaded machine.
const busyLead = 150 * time.Millisecond

// minFinalAfterStop is the least a turn's recogniser gets after
// input.speech_stopped before the turn is answered busy: a session whose end
// of turn already took listen_wait_ms (hello.patience) is answered busy late
// rather than always.
const minFinalAfterStop = 250 * time.Millisecond

// eotCounted is how much of a turn's end of turn counts against
// voice.listen_wait_ms: the default turn silence. A patient session, or a
// detector that held the turn open longer because the person paused mid
// thought, keeps its recogniser's time (busy due later) instead of being told
// busy for having paused.
const eotCounted = 500 * time.Millisecond

// finalWaitAfterStop is how long after input.speech_stopped a turn's final
// transcript may take before the turn is answered busy: voice.listen_wait_ms
// from the true end of speech (eot, speech_stopped's end_of_turn_ms, counted
// up to eotCounted) less busyLead, so that the busy answer's first packet is
// due by listen_wait_ms; at least minFinalAfterStop.
func (c Config) finalWaitAfterStop(eot time.Duration) time.Duration {
	if c.finalWait > 0 {
		return c.finalWait
	}
	return max(minFinalAfterStop, time.Duration(c.ListenWaitMs)*time.Millisecond-min(eot, eotCounted)-busyLead)
}
