package espeak

import (
	"errors"
	"fmt"
	"runtime"
)

// Config selects the binary, the voice and the output.
type Config struct {
	// Binary is the espeak-ng executable (looked up in PATH when bare).
	Binary string `yaml:"binary"`
	// Voice is an espeak-ng voice name, e.g. "en-us".
	Voice string `yaml:"voice"`
	// WordsPerMinute is the speaking rate.
	WordsPerMinute int `yaml:"words_per_minute"`
	// SampleRate of the PCM handed to the caller when a call asks for 0.
	SampleRate int `yaml:"sample_rate"`
	// MaxSentenceBytes bounds the WAV output of one sentence.
	MaxSentenceBytes int64 `yaml:"max_sentence_bytes"`
	// MaxSentenceChars splits longer sentences at a comma or space so the
	// first audio is never held back by one long sentence.
	MaxSentenceChars int `yaml:"max_sentence_chars"`
	// Concurrent is how many espeak-ng processes run at once; more
	// sentences wait their turn, so synthesis never takes more cores than
	// that from the media path.
	Concurrent int `yaml:"concurrent"`
	// Nice lowers the espeak-ng processes' scheduling priority by that much
	// below the gateway's (like nice -n; 0, the default, keeps it). On a
	// shared host a nice value yields to every other process too, and
	// replies wait for their speech.
	Nice int `yaml:"nice"`
}

// DefaultConfig speaks en-us at 160 wpm into 48 kHz PCM, one espeak-ng
// process fewer than GOMAXPROCS at a time (at least one), at the gateway's priority.
func DefaultConfig() Config {
	return Config{
		Binary:           "espeak-ng",
		Voice:            "en-us",
		WordsPerMinute:   160,
		SampleRate:       48000,
		MaxSentenceBytes: 16 << 20,
		MaxSentenceChars: 240,
		Concurrent:       max(1, runtime.GOMAXPROCS(0)-1),
		Nice:             0,
	}
}

// Validate checks the keys; it does not look the binary up.
func (c Config) Validate() error {
	switch {
	case c.Binary == "":
		return errors.New("espeak.binary: must be set")
	case c.Voice == "":
		return errors.New("espeak.voice: must be set")
	case c.WordsPerMinute < 80 || c.WordsPerMinute > 450:
		return fmt.Errorf("espeak.words_per_minute: must be in [80,450], got %d", c.WordsPerMinute)
	case c.SampleRate < 8000 || c.SampleRate > 48000:
		return fmt.Errorf("espeak.sample_rate: must be in [8000,48000], got %d", c.SampleRate)
	case c.MaxSentenceBytes < 64<<10:
		return fmt.Errorf("espeak.max_sentence_bytes: must be >= 65536, got %d", c.MaxSentenceBytes)
	case c.MaxSentenceChars < 20:
		return fmt.Errorf("espeak.max_sentence_chars: must be >= 20, got %d", c.MaxSentenceChars)
	case c.Concurrent < 1 || c.Concurrent > 64:
		return fmt.Errorf("espeak.concurrent: must be in [1,64], got %d", c.Concurrent)
	case c.Nice < 0 || c.Nice > 19:
		return fmt.Errorf("espeak.nice: must be in [0,19], got %d", c.Nice)
	}
	return nil
}
